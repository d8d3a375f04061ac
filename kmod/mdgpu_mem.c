// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_mem.c - the memory behind BAR2 (ring) and BAR4 (aperture).
 *
 * vmalloc_user() pages, zeroed, mapped with remap_vmalloc_range() into the
 * VFIO user (region mmap), into the daemon (/dev/mdgpu mmap) and into the
 * vGPU's worker (the mmap-only file of mdgpu_mem_file()).  Each VMA and
 * each such file holds a reference on the buffer, so unmapping or closing
 * after the vGPU is gone is safe.
 *
 * No lock: vaddr and size never change after mdgpu_mem_alloc(), and the
 * kref alone decides the buffer's lifetime.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "mdgpu.h"

struct mdgpu_mem *mdgpu_mem_alloc(size_t size)
{
	struct mdgpu_mem *mem;

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return NULL;
	mem->vaddr = vmalloc_user(size);
	if (!mem->vaddr) {
		kfree(mem);
		return NULL;
	}
	mem->size = size;
	kref_init(&mem->ref);
	return mem;
}

static void mdgpu_mem_free(struct kref *ref)
{
	struct mdgpu_mem *mem = container_of(ref, struct mdgpu_mem, ref);

	vfree(mem->vaddr);
	kfree(mem);
}

void mdgpu_mem_put(struct mdgpu_mem *mem)
{
	if (mem)
		kref_put(&mem->ref, mdgpu_mem_free);
}

static void mdgpu_mem_vm_open(struct vm_area_struct *vma)
{
	struct mdgpu_mem *mem = vma->vm_private_data;

	kref_get(&mem->ref);
}

static void mdgpu_mem_vm_close(struct vm_area_struct *vma)
{
	mdgpu_mem_put(vma->vm_private_data);
}

static const struct vm_operations_struct mdgpu_mem_vm_ops = {
	.open = mdgpu_mem_vm_open,
	.close = mdgpu_mem_vm_close,
};

/*
 * mdgpu_mem_mmap() - map @mem from byte @offset into @vma.
 *
 * MAP_SHARED only; @offset page aligned; the mapping must end inside the
 * buffer.  Returns 0 or -EINVAL.
 */
int mdgpu_mem_mmap(struct mdgpu_mem *mem, struct vm_area_struct *vma,
		   u64 offset)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!PAGE_ALIGNED(offset) || offset >= mem->size ||
	    len > mem->size - offset)
		return -EINVAL;
	ret = remap_vmalloc_range(vma, mem->vaddr, offset >> PAGE_SHIFT);
	if (ret)
		return ret;
	vma->vm_private_data = mem;
	vma->vm_ops = &mdgpu_mem_vm_ops;
	kref_get(&mem->ref);
	return 0;
}

/*
 * mdgpu_mem_rw() - read(2)/write(2) of a memory BAR through the region.
 *
 * Any size, any alignment, as long as [offset, offset + count) lies in the
 * buffer (else -EINVAL).  Returns @count or -EFAULT.
 */
ssize_t mdgpu_mem_rw(struct mdgpu_mem *mem, char __user *ubuf, size_t count,
		     u64 offset, bool write)
{
	unsigned long left;

	if (offset >= mem->size || count > mem->size - offset)
		return -EINVAL;
	if (write)
		left = copy_from_user(mem->vaddr + offset, ubuf, count);
	else
		left = copy_to_user(ubuf, mem->vaddr + offset, count);
	return left ? -EFAULT : count;
}

static int mdgpu_mem_file_release(struct inode *inode, struct file *filp)
{
	/* Pairs with the get in mdgpu_mem_file(). */
	mdgpu_mem_put(filp->private_data);
	return 0;
}

static int mdgpu_mem_file_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;
	return mdgpu_mem_mmap(filp->private_data, vma,
			      (u64)vma->vm_pgoff << PAGE_SHIFT);
}

/*
 * mmap is the file's only operation: ioctl gives -ENOTTY, read and write
 * -EINVAL (the VFS's answers for a missing handler).
 */
static const struct file_operations mdgpu_mem_file_fops = {
	.owner = THIS_MODULE,
	.release = mdgpu_mem_file_release,
	.mmap = mdgpu_mem_file_mmap,
};

/*
 * mdgpu_mem_file() - a new anonymous file whose only operation is mmap of
 * @mem from offset 0 (mdgpu_mem_mmap()'s rules).  The file holds a
 * reference on @mem until its last close, and the VFS a reference on the
 * module.  The caller holds its own reference on @mem for the duration of
 * the call.  Returns the file (f_mode read and write) or an ERR_PTR().
 */
struct file *mdgpu_mem_file(struct mdgpu_mem *mem, const char *name)
{
	struct file *filp;

	kref_get(&mem->ref);
	filp = anon_inode_getfile(name, &mdgpu_mem_file_fops, mem, O_RDWR);
	if (IS_ERR(filp))
		mdgpu_mem_put(mem);
	return filp;
}
