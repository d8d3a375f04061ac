# tests/vm/vm.mk: owned by its component (placeholder)
