/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/emu/panel_emu.h: what spmm_panel.cu needs beyond the CPU
 * emulation of precond/amg/emu/cuda_emu.h (verification only: run.sh). */
#pragma once
#include "cuda_emu.h"
#define __launch_bounds__(n)
inline cudaStream_t sps_stream(const sps_context *) { return nullptr; }
