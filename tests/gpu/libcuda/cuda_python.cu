// SPDX-License-Identifier: GPL-2.0 OR MIT
// Kernels of tests/gpu/frameworks/cuda_python_probe.py, compiled to PTX for
// sm_90 by tests/gpu/cuda-python.sh (nvcc -ptx) and loaded with
// cuModuleLoadData through cuda-python: the same image natively and
// through mdgpu.  Names and parameter layouts are ones CI's fake libcuda
// also runs (as C), so the probe can run over the fake as well.

extern "C" __global__ void saxpy(float a, const float *x, float *y,
				 unsigned int n)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

extern "C" __global__ void vadd_f32(const float *a, const float *b, float *c,
				    unsigned int n)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}
