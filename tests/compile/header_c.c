/* header_c.c - proves nnprof.h is self-contained C11, and that the instrumentation macros
 * compile both ways (built with and without NNP_ENABLE; never run). */
#include <nnprof/nnprof.h>

int nnp_compile_probe_c(void);
int nnp_compile_probe_c(void)
{
    nnp_options_t o;
    nnp_op_t op = {0};
    nnp_host_tag_t tag = {0};
    uint64_t t0 = NNP_NOW();
    NNP_RANGE_BEGIN(&tag);
    NNP_OP_SINCE(&op, t0);
    NNP_RANGE_END(&tag);
    NNP_STEP_BEGIN(1, 0);
    NNP_STEP_END(1, 0);
    NNP_COUNTER(0, 1.0);
    (void)t0;
    (void)op;
    (void)tag;
    return nnp_options_init(&o);
}
