# SPDX-License-Identifier: GPL-2.0 OR MIT
"""CuPy on whatever libcuda.so.1 the loader finds: "ok <step>" or
"FAIL <step> <error>" per step, results checked against NumPy."""
import sys
import time
import traceback

failed = 0


def step(name, fn):
    global failed
    t = time.time()
    try:
        detail = fn()
        print(f"ok {name} {detail if detail is not None else ''} "
              f"({time.time() - t:.2f} s)", flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failed += 1
        print(f"FAIL {name} {type(e).__name__}: {str(e)[:300]}", flush=True)
        traceback.print_exc(file=sys.stderr)


import numpy as np  # noqa: E402
import cupy as cp  # noqa: E402

step("device", lambda: f"{cp.cuda.runtime.getDeviceCount()} "
     f"{cp.cuda.runtime.getDeviceProperties(0)['name']!r}")
step("memGetInfo", lambda: cp.cuda.runtime.memGetInfo())


def elementwise():
    a = np.arange(1 << 20, dtype=np.float32)
    g = cp.asarray(a) * 2 + 1
    assert np.array_equal(cp.asnumpy(g), a * 2 + 1)
    return "1M floats"


step("elementwise", elementwise)


def reduce_():
    a = np.random.default_rng(0).random(1 << 22)
    s = float(cp.asarray(a).sum())
    assert abs(s - a.sum()) < 1e-6 * abs(s)
    return f"sum {s:.3f}"


step("reduce", reduce_)


def rawkernel():
    k = cp.RawKernel(r'''
extern "C" __global__ void axpb(const float *x, float *y, float a, float b,
                                int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}''', "axpb")
    n = 1 << 16
    x = cp.arange(n, dtype=cp.float32)
    y = cp.empty_like(x)
    k(((n + 255) // 256,), (256,), (x, y, cp.float32(3), cp.float32(1),
                                   cp.int32(n)))
    assert np.array_equal(cp.asnumpy(y), np.arange(n, dtype=np.float32) * 3 + 1)
    return "nvrtc"


step("rawkernel_nvrtc", rawkernel)


def matmul():
    r = np.random.default_rng(1)
    a = r.standard_normal((512, 512)).astype(np.float32)
    b = r.standard_normal((512, 512)).astype(np.float32)
    g = cp.asnumpy(cp.asarray(a) @ cp.asarray(b))
    err = float(np.abs(g - a @ b).max())
    assert err < 1e-2, err
    return f"max err {err:.2e}"


step("matmul_cublas", matmul)


def fft():
    a = np.random.default_rng(2).standard_normal(4096)
    g = cp.asnumpy(cp.fft.fft(cp.asarray(a)))
    err = float(np.abs(g - np.fft.fft(a)).max())
    assert err < 1e-6, err
    return f"max err {err:.2e}"


step("fft_cufft", fft)


def stream():
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.ones(1 << 20) * 3
    s.synchronize()
    assert float(x.sum()) == 3 * (1 << 20)
    return "non-blocking stream"


step("stream", stream)
print(f"cupy_probe: {failed} failed", flush=True)
sys.exit(1 if failed else 0)
