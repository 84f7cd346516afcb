"""fake_profile.py - a run of tests/gpu/gpu_check.cu as the CUDA back end would record it,
made without a GPU through libnnprof's public calls (ctypes), plus the expectations file the
program would write. selftest.sh feeds both to check_profile.py, so the GPU checker is itself
tested on every machine: it must pass this profile and fail a wrong one.

Usage: fake_profile.py OUTPUT_PATH LIBNNPROF EXPECTATIONS.json"""
import ctypes, json, os, sys, threading
from ctypes import c_uint32, c_uint64, c_int32, c_int, Structure, byref, c_char_p
out = sys.argv[1]
os.environ.pop("NNPROF_ROOT_PID", None)  # a child of another profiled process would not start
os.environ["MS_PROFILER_OPTIONS"] = json.dumps({"start": True, "output_path": out, "profile_memory": True})
lib = ctypes.CDLL(sys.argv[2])
lib.nnp_intern.restype = c_uint32; lib.nnp_intern.argtypes = [c_char_p]
lib.nnp_clock_ns.restype = c_uint64
I = lambda s: lib.nnp_intern(s.encode())
class K(Structure): _fields_ = [("name", c_uint32), ("type", c_uint32), ("device_id", c_uint32), ("stream_id", c_uint32), ("corr", c_uint64), ("launch", c_uint64)]
class L(Structure): _fields_ = [(n, c_uint32) for n in ("gx","gy","gz","bx","by","bz","regs","ss","ds")]
class C(Structure): _fields_ = [("bytes", c_uint64), ("kind", c_int), ("src", c_int), ("dst", c_int), ("sd", c_uint32), ("dd", c_uint32), ("value", c_uint32)]
class Call(Structure): _fields_ = [("name", c_uint32), ("kind", c_int), ("domain", c_uint32), ("corr", c_uint64), ("tid", c_uint64), ("stream", c_uint32), ("status", c_int32), ("launch", c_uint64)]
class Op(Structure): _fields_ = [("name", c_uint32), ("type", c_uint32), ("graph_id", c_uint32), ("stream_id", c_uint32), ("corr", c_uint64), ("shapes", c_uint32), ("dtypes", c_uint32), ("fm", c_uint64), ("fv", c_uint64)]
class T(Structure): _fields_ = [("address", c_uint64), ("size", c_uint64), ("name", c_uint32), ("owner", c_uint32), ("device_id", c_uint32)]
t = lib.nnp_clock_ns() + 1000
TAG = 1 << 63
TID = threading.get_native_id()  # as CUPTI gives a call's thread: the OS thread id
corr = [1]
# launch: CUPTI's correlation id of an API call, which the device work it queued carries
# too (the back end's launch_id); a call of no op also has it, tagged, as its corr.
def call(name, kind, c, s, e, stream=0, launch=0):
    x = Call(I(name), kind, 0, c, TID, stream, 0, launch); lib.nnp_call_at(byref(x), c_uint64(s), c_uint64(e))
def kern(name, g, b, ds, c, s, e, launch):
    lib.nnp_kernel_launch_at(byref(K(I(name), I("cuLaunchKernel"), 0, 7, c, launch)), byref(L(g,1,1,b,1,1,16,0,ds)), c_uint64(s), c_uint64(e))
def copy(kind, src, dst, nbytes, c, s, e, launch):
    names = {1: "MemcpyH2D", 2: "MemcpyD2H", 11: "MemorySet"}
    lib.nnp_copy_at(byref(K(I(names[kind]), I("cuMemset" if kind == 11 else "cuMemcpy"), 0, 7, c, launch)), byref(C(nbytes, kind, src, dst, 0, 0, 0)), c_uint64(s), c_uint64(e))
MIB = 1 << 20
for i, sz in enumerate((4*MIB, 4*MIB, MIB)):
    lib.nnp_mem_alloc_at(byref(T(0x1000 * (i + 1), sz, 0, 0, 0)), c_uint64(t)); t += 10
def nvtx(name, s, e):
    x = Call(I(name), 4, 0, 0, TID, 0, 0); lib.nnp_call_at(byref(x), c_uint64(s), c_uint64(e))
def launch_then(kname, n, g, b, ds, opcorr=None):
    global t
    start = t
    for i in range(n):
        c = (opcorr + i) if opcorr is not None else (TAG | (corr[0]))
        lid = corr[0]; corr[0] += 1
        call("cudaLaunchKernel", 1, c, t, t + 5, launch=lid)
        if opcorr is not None:
            lib.nnp_op_at(byref(Op(I("Default/net/Saxpy-op1"), I("Saxpy"), 0, 0, c)), c_uint64(t - 1), c_uint64(t + 6))
        kern(kname, g, b, ds, c, t + 10, t + 20, lid); t += 30
    call("cudaStreamSynchronize", 1, TAG | corr[0], t, t + 50, launch=corr[0]); corr[0] += 1
    nvtx(kname + "_phase" if kname != "reduce_sum" else "reduce_phase", start, t + 50); t += 60
s0 = t
for i in range(3):
    l = corr[0]; c = TAG | l; corr[0] += 1; call("cudaMemcpyAsync", 1, c, t, t + 5, launch=l); copy(1, 2, 3, MIB, c, t + 6, t + 9, l); t += 10
l = corr[0]; c = TAG | l; corr[0] += 1; call("cudaMemcpyAsync", 1, c, t, t + 5, launch=l); copy(1, 1, 3, 4 * MIB, c, t + 6, t + 9, l); t += 10
l = corr[0]; c = TAG | l; corr[0] += 1; call("cudaMemsetAsync", 1, c, t, t + 5, launch=l); copy(11, 0, 3, 256 * 1024, c, t + 6, t + 9, l); t += 10
call("cudaStreamSynchronize", 1, TAG | corr[0], t, t + 5, launch=corr[0]); corr[0] += 1; nvtx("copy_phase", s0, t + 5); t += 10
launch_then("fill", 10, 64, 256, 0)
launch_then("saxpy", 20, 128, 128, 0, opcorr=1000)
launch_then("reduce_sum", 5, 32, 512, 2048)
for i in range(2):
    l = corr[0]; c = TAG | l; corr[0] += 1; call("cudaMemcpyAsync", 1, c, t, t + 5, launch=l); copy(2, 3, 2, MIB, c, t + 6, t + 9, l); t += 10
for i in range(3):
    lib.nnp_mem_free_at(c_uint64(0x1000 * (i + 1)), c_uint64(0), c_uint64(t)); t += 10
lib.nnp_counter_at(I("cupti_dropped_records"), ctypes.c_double(0), c_uint64(t))
exp = {"profiled": True, "kernels": {"fill": {"count": 10, "grid": [64,1,1], "block": [256,1,1], "dynamic_shared": 0}, "saxpy": {"count": 20, "grid": [128,1,1], "block": [128,1,1], "dynamic_shared": 0}, "reduce_sum": {"count": 5, "grid": [32,1,1], "block": [512,1,1], "dynamic_shared": 2048}},
 "copies": {"HtoD": {"count": 4, "bytes": 3*MIB + 4*MIB, "pageable": 1}, "DtoH": {"count": 2, "bytes": 2*MIB}}, "memset": {"count": 1, "bytes": 262144},
 "device_allocs": [4*MIB, 4*MIB, MIB], "nvtx": ["copy_phase","fill_phase","saxpy_phase","reduce_phase"], "op": {"name": "Default/net/Saxpy-op1", "count": 20, "kernels": 20, "first_correlation_id": 1000}}
json.dump(exp, open(sys.argv[3], "w"))
