// header_cxx.cpp - proves nnprof.h compiles as C++ with C linkage (built, never run).
#include <nnprof/nnprof.h>

int nnp_compile_probe_cxx();
int nnp_compile_probe_cxx()
{
    nnp_options_t o;
    return nnp_options_init(&o);
}
