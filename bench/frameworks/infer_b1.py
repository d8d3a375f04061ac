# SPDX-License-Identifier: GPL-2.0 OR MIT
"""ResNet-50 at batch 1 on whatever libcuda.so.1 the loader finds: where
the time of an iteration goes (issue, finish, the Python thread's CPU,
CUDA events), PyTorch's CPU profile of one iteration, and the logits of
the last one saved to OUT.pt so that two runs can be compared.

  python3 infer_b1.py OUT.pt LABEL
"""
import sys, time, torch, torchvision
torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
m = torchvision.models.resnet50(weights=None).cuda().eval()
x = torch.randn(1, 3, 224, 224, device='cuda')
with torch.no_grad():
    for _ in range(10):
        y = m(x)
    torch.cuda.synchronize()
    N = 300
    t0 = time.perf_counter(); c0 = time.process_time()
    for _ in range(N):
        y = m(x)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter(); c1 = time.process_time()
    e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(50):
        m(x)
    e1.record(); torch.cuda.synchronize()
    gpu = e0.elapsed_time(e1) / 50
    y = m(x)
    torch.cuda.synchronize()
print(f"{sys.argv[2]}: issue {(t1-t0)/N*1e3:.3f} ms/iter, to sync {(t2-t0)/N*1e3:.3f} ms/iter, "
      f"python cpu {(c1-c0)/N*1e3:.3f} ms/iter, events {gpu:.3f} ms/iter", flush=True)
torch.save(y.float().cpu(), sys.argv[1])
with torch.autograd.profiler.profile(use_cuda=False) as prof:
    with torch.no_grad():
        m(x); torch.cuda.synchronize()
print(f"{sys.argv[2]}: top cpu ops:")
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
