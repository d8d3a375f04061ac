# SPDX-License-Identifier: GPL-2.0 OR MIT
"""PyTorch on whatever libcuda.so.1 the loader finds: each step prints
"ok <step> <detail>" or "FAIL <step> <error>"; results are checked
against the CPU.  Usage: python3 torch_probe.py [quota_bytes]"""
import sys
import time
import traceback

quota = int(sys.argv[1]) if len(sys.argv) > 1 else 0
failed = 0


def step(name, fn):
    global failed
    t = time.time()
    try:
        detail = fn()
        print(f"ok {name} {detail if detail is not None else ''} "
              f"({time.time() - t:.2f} s)", flush=True)
        return True
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failed += 1
        print(f"FAIL {name} {type(e).__name__}: {str(e)[:300]}", flush=True)
        traceback.print_exc(file=sys.stderr)
        return False


import torch  # noqa: E402

def available():
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    return torch.version.cuda


step("available", available)
step("device", lambda: f"{torch.cuda.device_count()} "
     f"{torch.cuda.get_device_name(0)!r} cc {torch.cuda.get_device_capability(0)}")
step("mem_get_info", lambda: torch.cuda.mem_get_info())


def add():
    a = torch.arange(1 << 20, dtype=torch.float32)
    g = a.cuda() * 2 + 1
    assert torch.equal(g.cpu(), a * 2 + 1)
    return "1M floats"


step("elementwise", add)


def reduce_():
    a = torch.rand(1 << 22, dtype=torch.float64)
    s = a.cuda().sum().item()
    assert abs(s - a.sum().item()) < 1e-6 * abs(s), (s, a.sum().item())
    return f"sum {s:.3f}"


step("reduce", reduce_)


def matmul():
    torch.manual_seed(0)
    a = torch.randn(1024, 1024)
    b = torch.randn(1024, 1024)
    g = (a.cuda() @ b.cuda()).cpu()
    err = (g - a @ b).abs().max().item()
    assert err < 1e-2, err
    return f"max err {err:.2e}"


step("matmul_cublas", matmul)


def conv():
    torch.manual_seed(0)
    x = torch.randn(8, 3, 64, 64)
    w = torch.randn(16, 3, 3, 3)
    g = torch.nn.functional.conv2d(x.cuda(), w.cuda()).cpu()
    err = (g - torch.nn.functional.conv2d(x, w)).abs().max().item()
    assert err < 1e-2, err
    return f"max err {err:.2e} cudnn {torch.backends.cudnn.version()}"


step("conv2d_cudnn", conv)


def streams():
    s = torch.cuda.Stream()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        e0.record()
        x = torch.ones(1 << 20, device="cuda")
        for _ in range(10):
            x = x * 1.5
        e1.record()
    s.synchronize()
    assert abs(x[0].item() - 1.5 ** 10) < 1e-3
    return f"elapsed {e0.elapsed_time(e1):.3f} ms"


step("streams_events", streams)


def train():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 10)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(256, 64, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    first = None
    for _ in range(50):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    last = loss.item()
    assert last < first, (first, last)
    return f"loss {first:.3f} -> {last:.3f}"


step("train_mlp", train)


def graph():
    x = torch.ones(1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = x * 2
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2 + 1
    x.fill_(3)
    g.replay()
    torch.cuda.synchronize()
    assert y[0].item() == 7, y[0].item()
    return "replayed"


step("cuda_graph", graph)


def nccl():
    """A single-rank NCCL all-reduce through torch.distributed: NCCL's
    own initialisation (its device and host-mapped buffers, its kernels)
    on whatever libcuda.so.1 the loader found."""
    import os
    import tempfile
    import torch.distributed as dist
    if not dist.is_nccl_available():
        return "skipped: this PyTorch has no NCCL"
    store = tempfile.NamedTemporaryFile(prefix="nccl-store-", delete=False)
    store.close()
    os.unlink(store.name)
    dist.init_process_group("nccl", init_method=f"file://{store.name}",
                            rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    try:
        a = torch.arange(1 << 20, dtype=torch.float32)
        t = a.cuda()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        u = torch.full((4096,), 2.5, device="cuda")
        dist.all_reduce(u, op=dist.ReduceOp.AVG)
        torch.cuda.synchronize()
        assert torch.equal(t.cpu(), a), "SUM over one rank changed the data"
        assert torch.equal(u.cpu(), torch.full((4096,), 2.5)), "AVG"
        return f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, 1M floats"
    finally:
        dist.destroy_process_group()


step("nccl_single_rank", nccl)


def oom():
    if not quota:
        return "skipped: no quota given"
    free, total = torch.cuda.mem_get_info()
    held = []
    try:
        while True:
            held.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))
    except torch.cuda.OutOfMemoryError:
        pass
    got = len(held) * (64 << 20)
    del held
    torch.cuda.empty_cache()
    assert got <= quota, (got, quota)
    return f"OutOfMemoryError after {got >> 20} MiB (quota {quota >> 20} MiB, mem_get_info total {total >> 20})"


step("oom_at_quota", oom)
print(f"torch_probe: {failed} failed", flush=True)
sys.exit(1 if failed else 0)
