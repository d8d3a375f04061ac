# SPDX-License-Identifier: GPL-2.0 OR MIT
"""cuda-python's driver bindings (cuda.bindings.driver) on whatever
libcuda.so.1 the loader finds, as the cuda-python documentation's
examples use them: a PTX module loaded with cuModuleLoadData, kernels
launched with cuLaunchKernel and kernelParams built as a NumPy array of
the addresses of NumPy values, results copied back and checked element by
element against NumPy.

    cuda_python_probe.py KERNELS.ptx    (tests/gpu/libcuda/cuda_python.cu)

Prints "PASS <step> ..." or "FAIL <step> ..." per step, "info ..." for
what may differ between drivers (name, version), then
"cuda_python_probe: N passed, M failed"; exits 1 if any step failed."""
import ctypes
import sys
import traceback

import numpy as np

try:
    from cuda.bindings import driver as cu
except ImportError:  # cuda-python before 12.6: the older module layout
    from cuda import cuda as cu

# 2^18 floats: every value below (x * 2.5 + y, a + b) is exact in float32,
# so the GPU's fused multiply-add and NumPy's separate operations agree
# bit for bit and the comparison can be exact.
N = 1 << 18
BLOCK = 256
passed = 0
failed = 0


def err_name(err):
    """"CUDA_ERROR_... (number)" for a CUresult."""
    e, name = cu.cuGetErrorName(err)
    ok = e == cu.CUresult.CUDA_SUCCESS and name
    return f"{name.decode() if ok else '?'} ({getattr(err, 'value', err)})"


class CudaError(Exception):
    def __init__(self, call, err):
        self.err = err
        super().__init__(f"{call}: {err_name(err)}")


def ck(call, res):
    """The values of a cuda-python result tuple; CudaError unless the
    first element is CUDA_SUCCESS."""
    if not isinstance(res, tuple):
        res = (res,)
    if res[0] != cu.CUresult.CUDA_SUCCESS:
        raise CudaError(call, res[0])
    return res[1] if len(res) == 2 else res[1:]


def step(name, fn):
    global passed, failed
    try:
        detail = fn()
        passed += 1
        print(f"PASS {name} {detail if detail is not None else ''}",
              flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failed += 1
        print(f"FAIL {name} {type(e).__name__}: {str(e)[:300]}", flush=True)
        traceback.print_exc(file=sys.stderr)


def compare(name, got, want):
    """Exact element-by-element equality, or AssertionError naming the
    first mismatch and how many there are."""
    bad = np.flatnonzero(got != want)
    if bad.size:
        i = int(bad[0])
        raise AssertionError(f"{bad.size} of {want.size} elements differ, "
                             f"first [{i}] {got[i]!r} != {want[i]!r}")
    return f"{want.size} elements equal"


def launch(stream, fn, args):
    """cuLaunchKernel over N elements: kernelParams as the cuda-python
    examples build them, a uint64 array of the addresses of the values."""
    params = np.array([a.ctypes.data for a in args], dtype=np.uint64)
    ck("cuLaunchKernel",
       cu.cuLaunchKernel(fn, (N + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1,
                         0, stream, params.ctypes.data, 0))
    ck("cuStreamSynchronize", cu.cuStreamSynchronize(stream))


def dptr_arg(d):
    return np.array([int(d)], dtype=np.uint64)


class Probe:
    def __init__(self, ptx_path):
        with open(ptx_path, "rb") as f:
            # NUL-terminated, kept alive for cuModuleLoadData.
            self.ptx = np.frombuffer(f.read() + b"\0", dtype=np.uint8)
        self.bytes = N * 4
        self.dev = None
        self.ctx = None
        self.mod = None
        self.stream = None
        self.bufs = []

    def init(self):
        ck("cuInit", cu.cuInit(0))
        ver = ck("cuDriverGetVersion", cu.cuDriverGetVersion())
        count = ck("cuDeviceGetCount", cu.cuDeviceGetCount())
        assert count >= 1, f"{count} devices"
        self.dev = ck("cuDeviceGet", cu.cuDeviceGet(0))
        name = ck("cuDeviceGetName", cu.cuDeviceGetName(256, self.dev))
        name = name.split(b"\0")[0].decode(errors="replace")
        print(f"info driver {ver}, {count} device(s), {name!r}", flush=True)
        return f"{count} device(s)"

    def context(self):
        self.ctx = ck("cuDevicePrimaryCtxRetain",
                      cu.cuDevicePrimaryCtxRetain(self.dev))
        ck("cuCtxSetCurrent", cu.cuCtxSetCurrent(self.ctx))
        self.stream = ck("cuStreamCreate", cu.cuStreamCreate(0))
        return "primary context, one stream"

    def module(self):
        self.mod = ck("cuModuleLoadData",
                      cu.cuModuleLoadData(self.ptx.ctypes.data))
        self.saxpy = ck("cuModuleGetFunction",
                        cu.cuModuleGetFunction(self.mod, b"saxpy"))
        self.vadd = ck("cuModuleGetFunction",
                       cu.cuModuleGetFunction(self.mod, b"vadd_f32"))
        return f"PTX {self.ptx.size - 1} bytes, saxpy and vadd_f32"

    def missing_function(self):
        err, _ = cu.cuModuleGetFunction(self.mod, b"no_such_kernel")
        assert err == cu.CUresult.CUDA_ERROR_NOT_FOUND, \
            f"got {err_name(err)}, not CUDA_ERROR_NOT_FOUND"
        return "CUDA_ERROR_NOT_FOUND"

    def alloc(self):
        d = ck("cuMemAlloc", cu.cuMemAlloc(self.bytes))
        self.bufs.append(d)
        return d

    def saxpy_step(self):
        x = np.arange(N, dtype=np.float32)
        y = (np.arange(N, dtype=np.float32)[::-1] * np.float32(0.25)).copy()
        a = np.array([2.5], dtype=np.float32)
        dx, dy = self.alloc(), self.alloc()
        ck("cuMemcpyHtoD", cu.cuMemcpyHtoD(dx, x.ctypes.data, self.bytes))
        ck("cuMemcpyHtoD", cu.cuMemcpyHtoD(dy, y.ctypes.data, self.bytes))
        launch(self.stream, self.saxpy,
               [a, dptr_arg(dx), dptr_arg(dy),
                np.array([N], dtype=np.uint32)])
        out = np.zeros(N, dtype=np.float32)
        ck("cuMemcpyDtoH", cu.cuMemcpyDtoH(out.ctypes.data, dy, self.bytes))
        return compare("saxpy", out, a[0] * x + y)

    def vadd_step(self):
        ha = np.arange(N, dtype=np.float32) * np.float32(3)
        hb = np.full(N, 7, dtype=np.float32)
        da, db, dc = self.alloc(), self.alloc(), self.alloc()
        ck("cuMemcpyHtoD", cu.cuMemcpyHtoD(da, ha.ctypes.data, self.bytes))
        ck("cuMemcpyHtoD", cu.cuMemcpyHtoD(db, hb.ctypes.data, self.bytes))
        ck("cuMemsetD32", cu.cuMemsetD32(dc, 0xffffffff, N))
        launch(self.stream, self.vadd,
               [dptr_arg(da), dptr_arg(db), dptr_arg(dc),
                np.array([N], dtype=np.uint32)])
        out = np.zeros(N, dtype=np.float32)
        ck("cuMemcpyDtoH", cu.cuMemcpyDtoH(out.ctypes.data, dc, self.bytes))
        return compare("vadd_f32", out, ha + hb)

    def proc_address(self):
        """cuGetProcAddress through the bindings: the entry point cuda-python
        itself resolves every function with."""
        flags = cu.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_DEFAULT
        r = cu.cuGetProcAddress(b"cuLaunchKernel", 12000, flags)
        pfn = ck("cuGetProcAddress", r)
        if isinstance(pfn, tuple):
            pfn = pfn[0]
        assert int(pfn) != 0, "cuLaunchKernel resolved to NULL"
        return "cuLaunchKernel resolved"

    def managed(self):
        """cuMemAllocManaged: either it works (the memory takes a memset
        and reads back) or it fails; a success that does not work is the
        error this step catches."""
        flags = cu.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL
        err, d = cu.cuMemAllocManaged(4096, flags)
        if err != cu.CUresult.CUDA_SUCCESS:
            return f"refused: {err_name(err)}"
        try:
            ck("cuMemsetD32", cu.cuMemsetD32(d, 0x12345678, 1024))
            ck("cuCtxSynchronize", cu.cuCtxSynchronize())
            out = np.zeros(1024, dtype=np.uint32)
            ck("cuMemcpyDtoH", cu.cuMemcpyDtoH(out.ctypes.data, d, 4096))
            compare("managed", out, np.full(1024, 0x12345678, np.uint32))
            # Managed memory is the host's too: read it in place.
            host = np.frombuffer(ctypes.string_at(int(d), 16),
                                 dtype=np.uint32)
            compare("managed (host view)", host,
                    np.full(4, 0x12345678, np.uint32))
        finally:
            ck("cuMemFree", cu.cuMemFree(d))
        return "allocated, memset and read back on device and host"

    def teardown(self):
        for d in self.bufs:
            ck("cuMemFree", cu.cuMemFree(d))
        self.bufs = []
        ck("cuStreamDestroy", cu.cuStreamDestroy(self.stream))
        ck("cuModuleUnload", cu.cuModuleUnload(self.mod))
        ck("cuDevicePrimaryCtxRelease", cu.cuDevicePrimaryCtxRelease(self.dev))
        return "freed, unloaded, released"


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} KERNELS.ptx", file=sys.stderr)
        return 2
    p = Probe(sys.argv[1])
    steps = (("init", p.init), ("context", p.context), ("module", p.module),
             ("missing_function", p.missing_function),
             ("saxpy", p.saxpy_step), ("vadd_f32", p.vadd_step),
             ("cuGetProcAddress", p.proc_address), ("managed", p.managed),
             ("teardown", p.teardown))
    for name, fn in steps:
        step(name, fn)
        if failed and name == "init":
            break
    print(f"cuda_python_probe: {passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
