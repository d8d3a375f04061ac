__global__ void foo(float *p, int n, char c) { if (n) p[0] = c; }
