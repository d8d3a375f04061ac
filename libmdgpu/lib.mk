# libmdgpu/lib.mk: owned by its component (placeholder)
