/* SPDX-License-Identifier: MIT */
/*
 * region.c - create, open, validate and unlink the shared-memory region.
 *
 * Creation is atomic by construction: the creator builds the whole region in
 * a temporary shm object that only it knows the name of, then link()s it to
 * the public name.  link() fails with EEXIST if the name exists, so
 * concurrent creators end with exactly one region, and an opener can only
 * ever see a complete one.  A creator killed mid-way leaves only its
 * temporary object, which it held an flock on; the next creator of the same
 * name removes such orphans.
 *
 * Opening trusts nothing: the header is read with pread() and every size and
 * offset is recomputed from the capacities and compared before mapping.
 *
 * This file also owns the handle's whole lifetime: struct bakery is made
 * here, counted (one reference for the user's handle, one per thread slot,
 * registry.c) and freed here when the last reference goes.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "region.h"
#include "token.h"

/* glibc's shm_open() keeps its objects here; link() needs real paths. */
#define SHM_DIR "/dev/shm/"
/* Temporaries are NAME + TMP_TAG + "PID.N": DEL is refused in region names
 * (name_check), so no region, and no other region's temporary, has a name
 * starting with a region's temporary prefix: the orphan sweep and the
 * exclusive create of a temporary touch only temporaries of that region. */
#define TMP_TAG "\x7f" "new."

/* ---------------------------------------------------------------- names -- */

int bakery__name_check(const char *name, size_t max)
{
	size_t len;

	if (!name || !*name)
		return EINVAL;
	len = strnlen(name, max + 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '/' || c < 0x20 || c > 0x7e)
			return EINVAL;
	}
	if (len > max)
		return ENAMETOOLONG;
	return 0;
}

/* "/name" or "name" -> "/name" in OUT (BAKERY_REGION_NAME_MAX + 2 bytes). */
static int region_name(const char *name, char *out)
{
	int err;

	if (!name)
		return EINVAL;
	if (*name == '/')
		name++;
	err = bakery__name_check(name, BAKERY_REGION_NAME_MAX);
	if (err)
		return err;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return EINVAL;
	snprintf(out, BAKERY_REGION_NAME_MAX + 2, "/%s", name);
	return 0;
}

/* --------------------------------------------------------------- layout -- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int bakery__layout_compute(unsigned nslots, unsigned nlocks, struct layout *out)
{
	uint64_t off;

	if (nslots < 1 || nslots > BAKERY_MAX_SLOTS || nlocks < 1 || nlocks > BAKERY_MAX_LOCKS)
		return EINVAL;
	out->nslots = nslots;
	out->nlocks = nlocks;
	/* each lock's set on whole cache lines */
	out->active_words = (uint32_t)align_up((nslots + 63) / 64, CACHE_LINE / 8);
	off = align_up(sizeof(struct bakery_shm_header), 4096);
	out->slots_off = off;
	off += (uint64_t)nslots * sizeof(struct bakery_shm_slot);
	off = align_up(off, CACHE_LINE);
	out->locks_off = off;
	off += (uint64_t)nlocks * sizeof(struct bakery_shm_lock);
	off = align_up(off, CACHE_LINE);
	out->active_off = off;
	off += (uint64_t)nlocks * out->active_words * sizeof(uint64_t);
	off = align_up(off, 4096);
	out->regs_off = off;
	off += (uint64_t)nlocks * nslots * sizeof(struct bakery_shm_reg);
	out->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	off = align_up(off, out->page_size);
	out->tokens_off = off;
	off += (uint64_t)(token_count(nslots) + TOKENS_PER_PAGE - 1) / TOKENS_PER_PAGE *
	       out->page_size;
	out->total_size = off;
	return 0;
}

/* FNV-1a over the immutable part of the header. */
uint64_t bakery__layout_hash(const struct bakery_shm_header *h)
{
	const unsigned char *p = (const unsigned char *)h;
	size_t n = offsetof(struct bakery_shm_header, layout_check);
	uint64_t x = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++) {
		x ^= p[i];
		x *= UINT64_C(0x100000001b3);
	}
	return x;
}

/* ------------------------------------------------------------ validation -- */

static int header_validate(const struct bakery_shm_header *h, uint64_t file_size)
{
	struct layout l;

	if ((h->magic >> 16) != (BAKERY_MAGIC >> 16))
		return BAKERY_EBADREGION;
	if (h->version != BAKERY_LAYOUT_VERSION || h->magic != BAKERY_MAGIC)
		return BAKERY_EVERSION;
	if (h->init_state != REGION_READY)
		return BAKERY_EBADREGION;
	if (bakery__layout_compute(h->nslots, h->nlocks, &l))
		return BAKERY_EBADREGION;
	if (h->header_size != sizeof(struct bakery_shm_header) ||
	    h->slot_size != sizeof(struct bakery_shm_slot) ||
	    h->lock_size != sizeof(struct bakery_shm_lock) ||
	    h->reg_size != sizeof(struct bakery_shm_reg) ||
	    h->active_words != l.active_words || h->page_size != l.page_size ||
	    h->slots_off != l.slots_off || h->locks_off != l.locks_off ||
	    h->active_off != l.active_off || h->regs_off != l.regs_off ||
	    h->tokens_off != l.tokens_off || h->total_size != l.total_size)
		return BAKERY_EBADREGION;
	if (h->layout_check != bakery__layout_hash(h))
		return BAKERY_EBADREGION;
	if (l.total_size > file_size)
		return BAKERY_EBADREGION;   /* truncated */
	return 0;
}

static struct bakery *handle_new(const char *shm_name)
{
	struct bakery *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->fd = -1;
	b->refs = 1;
	pthread_mutex_init(&b->recs_lock, NULL);
	pthread_mutex_init(&b->spare_lock, NULL);
	snprintf(b->name, sizeof(b->name), "%s", shm_name);
	return b;
}

static void handle_set_layout(struct bakery *b, const struct layout *l)
{
	b->nslots = l->nslots;
	b->nlocks = l->nlocks;
	b->active_words = l->active_words;
	b->size = l->total_size;
	b->hdr = (struct bakery_shm_header *)b->base;
	b->slots = (struct bakery_shm_slot *)(b->base + l->slots_off);
	b->locks = (struct bakery_shm_lock *)(b->base + l->locks_off);
	b->active = (uint64_t *)(b->base + l->active_off);
	b->regs = (struct bakery_shm_reg *)(b->base + l->regs_off);
	b->tokens_off = l->tokens_off;
	b->page_size = l->page_size;
}

/*
 * The slot table's token indices (layout 5), read from the region: each
 * slot names one of the 2 nslots slot tokens, and a slot being revoked
 * (odd generation) names its revoker's.  Checked once here, and again
 * wherever they are used (registry.c: a participant may rewrite them
 * later).
 */
static int slots_validate(const struct bakery *b)
{
	for (unsigned s = 0; s < b->nslots; s++) {
		const struct bakery_shm_slot *sl = &b->slots[s];

		if (CMM_LOAD_SHARED(sl->token) >= 2u * b->nslots)
			return BAKERY_EBADREGION;
		if ((CMM_LOAD_SHARED(sl->gen) & 1) &&
		    CMM_LOAD_SHARED(sl->revoker) >= 2u * b->nslots)
			return BAKERY_EBADREGION;
	}
	return 0;
}

/* Validate the object behind FD and map it into B. */
static int region_attach(struct bakery *b, int fd)
{
	struct bakery_shm_header h;
	struct layout l;
	struct stat st;
	void *p;
	int err;

	if (fstat(fd, &st) < 0)
		return errno;
	if ((uint64_t)st.st_size < sizeof(h))
		return BAKERY_EBADREGION;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return BAKERY_EBADREGION;
	err = header_validate(&h, (uint64_t)st.st_size);
	if (!err)
		err = bakery__token_abi_check(h.page_size);
	if (err)
		return err;
	bakery__layout_compute(h.nslots, h.nlocks, &l);
	p = mmap(NULL, l.total_size, b->rdonly ? PROT_READ : PROT_READ | PROT_WRITE,
	         MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	/* from here a shrink of the object costs us the region, not the
	 * process */
	err = bakery__guard_add(p, l.total_size, &b->lost, &b->guard);
	if (err) {
		munmap(p, l.total_size);
		return err;
	}
	b->base = p;
	b->fd = fd;
	handle_set_layout(b, &l);
	err = slots_validate(b);
	if (err) {
		bakery__guard_remove(b->guard);
		munmap(p, l.total_size);
		b->base = NULL;
		b->fd = -1;
	}
	return err;
}

/* ------------------------------------------------------------- creation -- */

/* The object is zero-filled: free slots and locks, free tokens (word 0). */
static void region_format(unsigned char *base, const struct layout *l)
{
	struct bakery_shm_header *h = (struct bakery_shm_header *)base;
	struct timespec now;

	h->version = BAKERY_LAYOUT_VERSION;
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(struct bakery_shm_slot);
	h->lock_size = sizeof(struct bakery_shm_lock);
	h->reg_size = sizeof(struct bakery_shm_reg);
	h->nslots = l->nslots;
	h->nlocks = l->nlocks;
	h->active_words = l->active_words;
	h->page_size = l->page_size;
	h->slots_off = l->slots_off;
	h->locks_off = l->locks_off;
	h->active_off = l->active_off;
	h->regs_off = l->regs_off;
	h->tokens_off = l->tokens_off;
	h->total_size = l->total_size;
	h->creator_pid = getpid();
	h->creator_uid = getuid();
	clock_gettime(CLOCK_REALTIME, &now);
	h->created_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	/* slot s stands for itself with token s; tokens nslots .. 2 nslots - 1
	 * start as spares (registry.c) */
	for (unsigned s = 0; s < l->nslots; s++)
		((struct bakery_shm_slot *)(base + l->slots_off))[s].token = s;
	CRASH_POINT("create-format");
	h->magic = BAKERY_MAGIC;
	h->init_state = REGION_READY;
	h->layout_check = bakery__layout_hash(h);
}

/*
 * Creators and the orphan sweep serialise on an flock of the shm directory,
 * held from before a creator's shm_open of its temporary object until it
 * holds its own flock on it: otherwise another creator's sweep could find
 * the fresh temporary unlocked and remove it as an orphan.  Held for
 * microseconds; the kernel drops it if the holder dies.
 */
static int shm_dir_lock(void)
{
	int d = open(SHM_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (d >= 0)
		flock(d, LOCK_EX);
	return d;
}

static void shm_dir_unlock(int d)
{
	if (d >= 0)
		close(d);
}

/* Remove temporary objects of NAME whose creators died (no flock held).
 * Called with the shm directory locked. */
static void orphans_remove(const char *shm_name)
{
	char prefix[BAKERY_REGION_NAME_MAX + 16];
	struct dirent *e;
	DIR *d = opendir(SHM_DIR);
	size_t plen;

	if (!d)
		return;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s" TMP_TAG, shm_name + 1);
	while ((e = readdir(d))) {
		char path[sizeof(SHM_DIR) + 256];
		int fd;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		snprintf(path, sizeof(path), SHM_DIR "%s", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(path);
		close(fd);
	}
	closedir(d);
}

/* Build the region under a temporary name and link it to SHM_NAME.
 * 0 and the open fd of the new region, EEXIST, or an error. */
static int region_create(const char *shm_name, const struct layout *l, mode_t mode, int *fd_out)
{
	static unsigned long counter;
	char tmp[BAKERY_REGION_NAME_MAX + 64], from[sizeof(tmp) + 16], to[sizeof(tmp) + 16];
	unsigned char *base;
	int fd, err = 0;

	int dir = shm_dir_lock();

	orphans_remove(shm_name);
	snprintf(tmp, sizeof(tmp), "%s" TMP_TAG "%d.%lu", shm_name, (int)getpid(),
	         uatomic_add_return(&counter, 1));
	fd = shm_open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		shm_dir_unlock(dir);
		return err;
	}
	/* held until we are done: tells orphans_remove() we are alive */
	flock(fd, LOCK_EX);
	shm_dir_unlock(dir);
	snprintf(from, sizeof(from), SHM_DIR "%s", tmp + 1);
	snprintf(to, sizeof(to), SHM_DIR "%s", shm_name + 1);
	if (fchmod(fd, mode) < 0 || ftruncate(fd, (off_t)l->total_size) < 0) {
		err = errno;
		goto out;
	}
	base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = errno;
		goto out;
	}
	region_format(base, l);
	munmap(base, l->total_size);
	CRASH_POINT("create-link");
	if (!err && link(from, to) < 0)
		err = errno;
out:
	unlink(from);
	flock(fd, LOCK_UN);
	if (err)
		close(fd);
	else
		*fd_out = fd;
	return err;
}

/* ---------------------------------------------------------------- open -- */

static int config_resolve(const struct bakery_config *cfg, struct layout *l, mode_t *mode)
{
	unsigned slots = cfg && cfg->slots ? cfg->slots : BAKERY_DEFAULT_SLOTS;
	unsigned locks = cfg && cfg->locks ? cfg->locks : BAKERY_DEFAULT_LOCKS;

	*mode = cfg && cfg->mode ? cfg->mode : 0600;
	/* read/write bits only: no setuid, setgid, sticky or execute bits */
	if (*mode & ~(mode_t)0666 || (cfg && !reserved_zero(cfg->reserved)))
		return EINVAL;
	return bakery__layout_compute(slots, locks, l);
}

static int region_open_existing(const char *shm_name, unsigned flags, int *fd)
{
	*fd = shm_open(shm_name, ((flags & BAKERY_RDONLY) ? O_RDONLY : O_RDWR) | O_CLOEXEC, 0);
	return *fd < 0 ? errno : 0;
}

/* ------------------------------------------------------------ mappings -- */

/* All open mappings of the process, for fork(). */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bakery *maps;
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;

static void atfork_prepare(void) { pthread_mutex_lock(&maps_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&maps_lock); }

/* In the child only the forking thread survives: the handles' mutexes may
 * have been held by threads that are gone, and their lists of thread
 * records name the parent's threads (registry.c forgets the forking
 * thread's own records). */
static void atfork_child(void)
{
	pthread_mutex_init(&maps_lock, NULL);
	for (struct bakery *b = maps; b; b = b->next) {
		pthread_mutex_init(&b->recs_lock, NULL);
		pthread_mutex_init(&b->spare_lock, NULL);
	}
}

/* FN(b) for every open handle; in a fork child (registry.c drops the
 * parent's threads' records with it), where no other thread runs. */
void bakery__region_for_each(void (*fn)(struct bakery *b))
{
	for (struct bakery *b = maps; b; b = b->next)
		fn(b);
}

static void maps_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void mapping_register(struct bakery *b)
{
	pthread_once(&maps_once, maps_init);
	pthread_mutex_lock(&maps_lock);
	b->next = maps;
	maps = b;
	pthread_mutex_unlock(&maps_lock);
}

/* bakery_close calls so far: a thread gives back its slots of closed
 * handles at its next lock call (registry.c) */
static unsigned long closes;

unsigned long bakery__region_closes(void)
{
	return uatomic_read(&closes);
}

static void mapping_unregister(struct bakery *b)
{
	pthread_mutex_lock(&maps_lock);
	for (struct bakery **pp = &maps; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	pthread_mutex_unlock(&maps_lock);
	/* full barrier (add_return): the handle's `closed` (set by
	 * bakery__region_close before this) before the count other threads
	 * poll; pairs with the read barrier in bakery__slot_self */
	(void)uatomic_add_return(&closes, 1);
}

/* Unmap and free: the last reference is gone. */
static void region_destroy(struct bakery *b)
{
	bakery__token_spares_free(b);
	bakery__guard_remove(b->guard);
	munmap(b->base, b->size);
	close(b->fd);
	free(b);
}

void bakery__region_get(struct bakery *b)
{
	uatomic_inc(&b->refs);
}

void bakery__region_put(struct bakery *b)
{
	if (uatomic_add_return(&b->refs, -1) == 0)
		region_destroy(b);
}

/* ---------------------------------------------------------------- open -- */

int bakery__region_open(const char *name, unsigned flags, const struct bakery_config *cfg,
                        struct bakery **out)
{
	char shm_name[BAKERY_REGION_NAME_MAX + 2];
	struct layout l;
	struct bakery *b;
	mode_t mode;
	int fd = -1, err;

	err = region_name(name, shm_name);
	if (err)
		return err;
	err = config_resolve(cfg, &l, &mode);
	if (err)
		return err;

	err = (flags & BAKERY_EXCL) ? ENOENT : region_open_existing(shm_name, flags, &fd);
	if (err == ENOENT && (flags & BAKERY_CREATE)) {
		err = region_create(shm_name, &l, mode, &fd);
		if (err == EEXIST && !(flags & BAKERY_EXCL))
			err = region_open_existing(shm_name, flags, &fd);
	}
	if (err)
		return err;

	b = handle_new(shm_name);
	if (!b) {
		close(fd);
		return ENOMEM;
	}
	b->rdonly = !!(flags & BAKERY_RDONLY);
	err = region_attach(b, fd);
	if (err) {
		close(fd);
		free(b);
		return err;
	}
	mapping_register(b);
	*out = b;
	return 0;
}

void bakery__region_close(struct bakery *b)
{
	b->closed = 1;
	mapping_unregister(b);
	bakery__region_put(b);
}

int bakery__region_unlink(const char *name)
{
	char shm_name[BAKERY_REGION_NAME_MAX + 2];
	int err = region_name(name, shm_name);

	if (err)
		return err;
	return shm_unlink(shm_name) < 0 ? errno : 0;
}
