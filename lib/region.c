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
 * name removes such orphans.  No lock is ever waited for: /dev/shm is
 * world-writable, and anything another user can lock or plant there could
 * otherwise hold every creator up (see shm_object_open, tmp_create).
 *
 * Opening trusts nothing: the object must be a regular file, of the caller
 * (or root) unless the caller accepts another owner (BAKERY_ANY_OWNER); the
 * header is read with pread() and every size and offset is recomputed from
 * the capacities and compared before mapping; the object's pages are
 * reserved, so that a full /dev/shm is an error (ENOSPC), not a signal.
 *
 * This file also owns the handle's whole lifetime: struct bakery is made
 * here, counted (one reference for the user's handle, one per thread slot,
 * registry.c) and freed here when the last reference goes.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exitfence.h"
#include "fd.h"
#include "guard.h"
#include "region.h"
#include "token.h"

/* glibc's shm_open() keeps its objects here.  The library opens them by
 * path, with flags of its own (shm_object_open), and link() needs paths. */
#define SHM_DIR "/dev/shm/"
/* Temporaries are NAME + TMP_TAG + "PID.N.RANDOM": DEL is refused in region
 * names (name_check), so no region, and no other region's temporary, has a
 * name starting with a region's temporary prefix: the orphan sweep and the
 * exclusive create of a temporary touch only temporaries of that region.
 * The random part makes the name one that nobody can plant beforehand. */
#define TMP_TAG "\x7f" "new."
/* Temporary names tried before giving up (each taken name is one that was
 * planted or left by a creator with our PID, or swept under us). */
#define TMP_ATTEMPTS 8

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

/* ------------------------------------------------------------- objects -- */

/* Room for "/" and any file name (NAME_MAX), and for its path. */
#define SHM_NAME_SIZE (1 + NAME_MAX + 1)
#define SHM_PATH_MAX (sizeof(SHM_DIR) + NAME_MAX + 1)

/* SHM_NAME ("/name") as a path under SHM_DIR, into PATH (SHM_PATH_MAX). */
static void shm_path(const char *shm_name, char *path)
{
	snprintf(path, SHM_PATH_MAX, SHM_DIR "%s", shm_name + 1);
}

/*
 * Open the object SHM_NAME with FLAGS (O_RDONLY or O_RDWR, maybe O_CREAT |
 * O_EXCL) into *FD and *ST, as nothing another user put there can hold us
 * up or lead us astray.  /dev/shm is world-writable: under any name may lie
 * a FIFO (a blocking open() would wait for a writer for ever), a symbolic
 * link (leading anywhere) or a directory.  So O_NONBLOCK, O_NOFOLLOW, and a
 * regular file or BAKERY_EBADREGION (not a region).  The descriptor is
 * close-on-exec and above 2 (fd.c).
 */
static int shm_object_open(const char *shm_name, int flags, mode_t mode, int *fd,
                           struct stat *st)
{
	char path[SHM_PATH_MAX];

	shm_path(shm_name, path);
	*fd = bakery__fd_open(path, flags | O_NONBLOCK | O_NOFOLLOW, mode);
	/* (a socket: ENXIO) */
	if (*fd < 0)
		return errno == ELOOP || errno == EISDIR || errno == ENXIO ? BAKERY_EBADREGION
		                                                           : errno;
	if (fstat(*fd, st) == 0 && S_ISREG(st->st_mode))
		return 0;
	close(*fd);
	*fd = -1;
	return BAKERY_EBADREGION;
}

/*
 * May the caller trust the object ST with its exclusion?  Whoever owns the
 * object can rewrite every register of the region, remove its locks or
 * change its mode: a region of another user, found under a name the caller
 * meant for its own, is a squat (that user created the name first).  So:
 * the caller's own (effective UID) or root's; another user's only when the
 * caller asks for it (BAKERY_ANY_OWNER), or for reading only (BAKERY_RDONLY:
 * introspection, which changes nothing).  0 or EPERM.
 */
static int owner_check(const struct stat *st, unsigned flags)
{
	if (st->st_uid == geteuid() || st->st_uid == 0 ||
	    (flags & (BAKERY_ANY_OWNER | BAKERY_RDONLY)))
		return 0;
	return EPERM;
}

/* Did reserving pages fail for want of room (an error for the caller), or
 * because the file system cannot reserve (the guard covers that case)? */
static bool no_room(int err)
{
	return err == ENOSPC || err == ENOMEM || err == EDQUOT || err == EFBIG;
}

/*
 * Reserve the pages of an existing region (one made by an older version,
 * or where fallocate did not work, may have pages never touched): a page
 * that cannot be had is ENOSPC now rather than a SIGBUS at its first touch.
 * FALLOC_FL_KEEP_SIZE: never grows an object that someone cut short after
 * we looked.  Nothing to do when every page is there (st_blocks).  Where
 * the file system cannot reserve, or on a read-only handle, the guard tells
 * such a fault from a truncation (guard.c).
 */
static int pages_reserve(int fd, const struct stat *st, uint64_t size)
{
	int r;

	if ((uint64_t)st->st_blocks * 512 >= size)
		return 0;
	do
		r = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size);
	while (r < 0 && errno == EINTR);         /* tmpfs stops at a signal */
	return r < 0 && no_room(errno) ? errno : 0;
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

/* Validate the object behind FD (whose fstat is ST) and map it into B. */
static int region_attach(struct bakery *b, int fd, const struct stat *st)
{
	struct bakery_shm_header h;
	struct layout l;
	void *p;
	int err;

	if ((uint64_t)st->st_size < sizeof(h))
		return BAKERY_EBADREGION;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return BAKERY_EBADREGION;
	err = header_validate(&h, (uint64_t)st->st_size);
	if (!err)
		err = bakery__token_abi_check(h.page_size);
	if (err)
		return err;
	bakery__layout_compute(h.nslots, h.nlocks, &l);
	if (!b->rdonly && (err = pages_reserve(fd, st, l.total_size)))
		return err;
	p = mmap(NULL, l.total_size, b->rdonly ? PROT_READ : PROT_READ | PROT_WRITE,
	         MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	/* from here a shrink of the object, or a page the file system cannot
	 * give, costs us the region, not the process */
	err = bakery__guard_add(p, l.total_size, fd, l.total_size, &b->lost, &b->guard);
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
	} else if (!b->rdonly)
		/* before any ticket of ours: how our exits fence */
		bakery__exit_fences_join(b);
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
 * A new temporary name for SHM_NAME into TMP: NAME TMP_TAG PID.N.RANDOM.
 * The random part (the clock where getrandom() has nothing to give) keeps
 * another user from planting something under it beforehand.
 */
static void tmp_name(const char *shm_name, char *tmp, size_t size)
{
	static unsigned long counter;
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		r = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	}
	snprintf(tmp, size, "%s" TMP_TAG "%d.%lu.%016llx", shm_name, (int)getpid(),
	         uatomic_add_return(&counter, 1), (unsigned long long)r);
}

/*
 * Create a temporary object for SHM_NAME: its name into TMP, its descriptor
 * into *FD, flocked (which tells orphans_remove() that its creator lives),
 * its fstat into *ST.  No directory lock, no waiting: another creator's
 * sweep may find the new object before our flock and take it for an
 * orphan.  Then either our flock fails (the sweeper holds it) or the object
 * has no name left (st_nlink 0): drop it and take another name.  A name
 * that exists (planted, or left by a creator with our PID) is passed over.
 * 0, EAGAIN after TMP_ATTEMPTS names, or an error.
 */
static int tmp_create(const char *shm_name, char *tmp, size_t size, int *fd, struct stat *st)
{
	char path[SHM_PATH_MAX];

	for (unsigned i = 0; i < TMP_ATTEMPTS; i++) {
		int err;

		tmp_name(shm_name, tmp, size);
		err = shm_object_open(tmp, O_RDWR | O_CREAT | O_EXCL, 0600, fd, st);
		if (err == EEXIST || err == BAKERY_EBADREGION)
			continue;
		if (err)
			return err;
		if (flock(*fd, LOCK_EX | LOCK_NB) == 0) {
			if (fstat(*fd, st) == 0 && st->st_nlink > 0)
				return 0;
		} else if (errno != EWOULDBLOCK) {
			/* flock refused (a seccomp profile), not taken: no
			 * other name would do better */
			err = errno;
		}
		/* the name is ours alone (random): removing it can remove
		 * nothing but our own object, if the sweeper has not yet */
		shm_path(tmp, path);
		unlink(path);
		close(*fd);
		if (err) {
			*fd = -1;
			return err;
		}
	}
	*fd = -1;
	return EAGAIN;
}

/*
 * Remove temporary objects of SHM_NAME whose creators died: regular files
 * of ours (another user's are not ours to judge, and the sticky /dev/shm
 * would refuse) that no live creator holds an flock on.  Each is opened as
 * any object here is (shm_object_open): nothing planted under the prefix
 * can hold the sweep up.
 */
static void orphans_remove(const char *shm_name)
{
	char prefix[BAKERY_REGION_NAME_MAX + 16];
	struct dirent *e;
	int dfd = bakery__fd_open(SHM_DIR, O_RDONLY | O_DIRECTORY, 0);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	size_t plen;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s" TMP_TAG, shm_name + 1);
	while ((e = readdir(d))) {
		char tmp[SHM_NAME_SIZE], path[SHM_PATH_MAX];
		struct stat st;
		int fd;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		snprintf(tmp, sizeof(tmp), "/%s", e->d_name);
		if (shm_object_open(tmp, O_RDONLY, 0, &fd, &st))
			continue;
		shm_path(tmp, path);
		if (st.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(path);
		close(fd);
	}
	closedir(d);
}

/*
 * Reserve every page of the new object: a full /dev/shm is ENOSPC here, not
 * a SIGBUS at the first touch (the format below, or any participant's
 * later).  Where the file system cannot reserve, the object is left as
 * ftruncate made it: the guard tells a later fault apart (guard.c).
 */
static int tmp_reserve(int fd, uint64_t size)
{
	int err;

	do
		err = posix_fallocate(fd, 0, (off_t)size);
	while (err == EINTR);
	return no_room(err) ? err : 0;
}

/*
 * region_format, under the SIGBUS guard: the temporary object has a name in
 * /dev/shm, and a process of ours that opens it may cut it short meanwhile
 * (ftruncate).  Then the format wrote to the guard's zero pages: the
 * object is not linked, and the creation fails with the guard's error
 * (BAKERY_EBADREGION: cut short; ENOSPC: no page to be had).
 */
static int region_format_guarded(unsigned char *base, const struct layout *l, int fd)
{
	struct guard *g;
	int lost = 0;
	int err = bakery__guard_add(base, l->total_size, fd, l->total_size, &lost, &g);

	if (err)
		return err;
	region_format(base, l);
	bakery__guard_remove(g);
	/* (the guard's handler ran on this thread, if at all: a compiler
	 * barrier is all the load needs) */
	return CMM_LOAD_SHARED(lost);
}

/* Build the region under a temporary name and link it to SHM_NAME.
 * 0 and the open fd of the new region and its fstat, EEXIST, or an
 * error. */
static int region_create(const char *shm_name, const struct layout *l, mode_t mode, int *fd_out,
                         struct stat *st)
{
	char tmp[SHM_NAME_SIZE], from[SHM_PATH_MAX], to[SHM_PATH_MAX];
	unsigned char *base;
	int fd, err;

	orphans_remove(shm_name);
	err = tmp_create(shm_name, tmp, sizeof(tmp), &fd, st);
	if (err)
		return err;
	shm_path(tmp, from);
	shm_path(shm_name, to);
	if (ftruncate(fd, (off_t)l->total_size) < 0) {
		err = errno;
		goto out;
	}
	if ((err = tmp_reserve(fd, l->total_size)))
		goto out;
	base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = errno;
		goto out;
	}
	err = region_format_guarded(base, l, fd);
	munmap(base, l->total_size);
	if (err)
		goto out;
	CRASH_POINT("create-link");
	/* the final mode only now, formatted: another user it admits could
	 * have cut the object short under the format */
	if (fchmod(fd, mode) < 0 || link(from, to) < 0 || fstat(fd, st) < 0)
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

int bakery__region_size(const struct bakery_config *cfg, uint64_t *size)
{
	struct layout l;
	mode_t mode;
	int err = config_resolve(cfg, &l, &mode);

	if (!err)
		*size = l.total_size;
	return err;
}

static int region_open_existing(const char *shm_name, unsigned flags, int *fd, struct stat *st)
{
	return shm_object_open(shm_name, (flags & BAKERY_RDONLY) ? O_RDONLY : O_RDWR, 0, fd, st);
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
 * thread's own records); and its robust list is the child's own, or none
 * (token.c). */
static void atfork_child(void)
{
	bakery__token_list_forget();
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
unsigned long bakery__closes;

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
	(void)uatomic_add_return(&bakery__closes, 1);
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
	struct stat st;
	mode_t mode;
	int fd = -1, err;

	err = region_name(name, shm_name);
	if (err)
		return err;
	err = config_resolve(cfg, &l, &mode);
	if (err)
		return err;

	err = (flags & BAKERY_EXCL) ? ENOENT : region_open_existing(shm_name, flags, &fd, &st);
	if (err == ENOENT && (flags & BAKERY_CREATE)) {
		err = region_create(shm_name, &l, mode, &fd, &st);
		if (err == EEXIST && !(flags & BAKERY_EXCL))
			err = region_open_existing(shm_name, flags, &fd, &st);
	}
	if (!err && (err = owner_check(&st, flags)))
		close(fd);
	if (err)
		return err;

	b = handle_new(shm_name);
	if (!b) {
		close(fd);
		return ENOMEM;
	}
	b->rdonly = !!(flags & BAKERY_RDONLY);
	err = region_attach(b, fd, &st);
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

int bakery__region_layout(const char *name, unsigned *version)
{
	char shm_name[BAKERY_REGION_NAME_MAX + 2];
	/* the magic and the version: where every layout has them */
	const size_t want = offsetof(struct bakery_shm_header, version) + sizeof(uint32_t);
	struct bakery_shm_header h;
	struct stat st;
	ssize_t n;
	int fd, err = region_name(name, shm_name);

	if (err || (err = shm_object_open(shm_name, O_RDONLY, 0, &fd, &st)))
		return err;
	n = pread(fd, &h, want, 0);
	err = n < 0 ? errno : 0;
	close(fd);
	if (err)
		return err;
	if ((size_t)n < want || (h.magic >> 16) != (BAKERY_MAGIC >> 16))
		return BAKERY_EBADREGION;
	/* another value of the magic's low bytes: another header, whose
	 * version may lie elsewhere */
	*version = h.magic == BAKERY_MAGIC ? h.version : 0;
	return 0;
}

int bakery__region_unlink(const char *name)
{
	char shm_name[BAKERY_REGION_NAME_MAX + 2];
	int err = region_name(name, shm_name);

	if (err)
		return err;
	if (shm_unlink(shm_name) == 0)
		return 0;
	/* a directory under the name is no region of anyone's */
	return errno == EISDIR ? BAKERY_EBADREGION : errno;
}
