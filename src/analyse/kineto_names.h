/* kineto_names.h - how Kineto names device activity (kineto_names.c): the category and name
 * libkineto gives a kernel, copy or memory set, and which collectives are NCCL's device
 * kernels. Shared by the Kineto export (src/export/kineto_gpu.c) and HTA's view of our own
 * captures (hta_view.c), so that HTA's tables of a capture equal those of its export.
 * Internal to src/analyse/ and src/export/. */
#ifndef NNP_KINETO_NAMES_H
#define NNP_KINETO_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* Room for the longest copy name, "Memcpy PtoP (Managed Static -> Managed Static)". */
#define NNP_KINETO_NAME_MAX 64

/* The Kineto category of kernels row i of m ("kernel", "gpu_memcpy" or "gpu_memset") and,
 * in *name, its Kineto name: the recorded name for kernels, libkineto's for copies and sets
 * recorded with their details ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)",
 * written into buf, NNP_KINETO_NAME_MAX bytes). */
const char *nnp__kineto_activity(const nnp_model_t *m, size_t i, char *buf, const char **name);

/* Whether a collective named name is NCCL's device kernel ("ncclKernel_...", NCCL >= 2.19
 * "ncclDevKernel_...", maybe mangled "_Z39ncclDevKernel_..."), not a framework's host
 * collective named after its backend ("nccl:all_reduce", the torch shim's spans). */
bool nnp__is_nccl_kernel(const char *name);

#endif
