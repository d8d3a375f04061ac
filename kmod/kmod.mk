# kmod/kmod.mk: owned by its component (placeholder)
