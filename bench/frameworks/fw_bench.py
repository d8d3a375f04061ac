# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Framework throughput on whatever libcuda.so.1 the loader finds.

  python3 fw_bench.py cases SECONDS    each case: warm-up, then as many
                                       iterations as fit in SECONDS; prints
                                       "RESULT <case> <value> <unit>"
  python3 fw_bench.py tenant SECONDS   a training loop that prints
                                       "TICK <unix time> <iterations>" every
                                       0.5 s after "READY", for SECONDS

Throughput is work done between two torch.cuda.synchronize() calls divided
by wall time, so it includes everything the program waits for: kernels,
copies and each layer of the stack the calls pass through.  Models use
random weights and random inputs: the work, not the result, is measured.
"""
import sys
import time

mode = sys.argv[1]
seconds = float(sys.argv[2])

import torch  # noqa: E402

torch.backends.cudnn.benchmark = True
dev = "cuda"


def timed(name, unit, per_iter, step, warmup=5):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    n = 0
    waited = 0.0
    t0 = time.perf_counter()
    while True:
        step()
        n += 1
        if n % 5 == 0:
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            waited += t2 - t1
            if t2 - t0 >= seconds:
                break
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"RESULT {name} {per_iter * n / dt:.3f} {unit}", flush=True)
    # Time spent waiting for the GPU: near 0 when the Python thread that
    # issues the work is what limits the case (CPU-bound), near the whole
    # iteration when the GPU is.
    print(f"WAIT {name} {100 * waited / dt:.1f} % of {dt / n * 1e3:.3f} "
          f"ms per iteration", flush=True)


def resnet_infer(batch):
    import torchvision
    m = torchvision.models.resnet50(weights=None).to(dev).eval()
    x = torch.randn(batch, 3, 224, 224, device=dev)

    def step():
        with torch.no_grad():
            m(x)
    timed(f"resnet50_infer_b{batch}", "images/s", batch, step)
    del m


def resnet_train(batch):
    import torchvision
    m = torchvision.models.resnet50(weights=None).to(dev).train()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    timed(f"resnet50_train_b{batch}", "images/s", batch, step)
    del m, opt


class Tiny(torch.nn.Module):
    """A small transformer language model: 4 layers, width 256."""

    def __init__(self, vocab=8192, d=256, layers=4):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        layer = torch.nn.TransformerEncoderLayer(d, 8, 4 * d,
                                                 batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, layers)
        self.out = torch.nn.Linear(d, vocab)

    def forward(self, t):
        return self.out(self.enc(self.emb(t)))


def transformer_step(batch, seq=128):
    """One AdamW training step of Tiny on random tokens, as a closure."""
    m = Tiny().to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    t = torch.randint(0, 8192, (batch, seq), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = m(t)
        torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), t.reshape(-1)).backward()
        opt.step()
    return step


def transformer_train(batch=32):
    timed("transformer_train_b32", "sequences/s", batch,
          transformer_step(batch))


def cupy_matmul(n=4096):
    import cupy as cp
    a = cp.random.standard_normal((n, n), dtype=cp.float32)
    b = cp.random.standard_normal((n, n), dtype=cp.float32)
    for _ in range(3):
        a @ b
    cp.cuda.Device().synchronize()
    k = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            a @ b
        cp.cuda.Device().synchronize()
        k += 10
    dt = time.perf_counter() - t0
    print(f"RESULT cupy_matmul_4096 {2 * n ** 3 * k / dt / 1e12:.3f} TFLOP/s",
          flush=True)


if mode == "cases":
    resnet_infer(1)
    resnet_infer(64)
    resnet_train(32)
    transformer_train()
    try:
        import cupy  # noqa: F401
    except ImportError:
        print("SKIPPED cupy_matmul_4096: no cupy", flush=True)
    else:
        cupy_matmul()
elif mode == "tenant":
    step = transformer_step(16)
    n = 0
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    print("READY", flush=True)
    end = time.time() + seconds
    last = 0.0
    while time.time() < end:
        step()
        torch.cuda.synchronize()
        n += 1
        if time.time() - last >= 0.5:
            last = time.time()
            print(f"TICK {last:.3f} {n}", flush=True)
else:
    sys.exit(f"unknown mode {mode}")
