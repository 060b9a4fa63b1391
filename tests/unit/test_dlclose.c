/*
 * test_dlclose.c - the library stays loaded after dlclose(): it is linked
 * NODELETE, because a thread that used it keeps a thread-exit handler and
 * the process a SIGBUS handler that point into its code.
 *
 * A child dlopen()s lib/.libs/libbakery.so.0 of the build (this program does
 * not link the library, so dlclose() could really unload it), lets a thread
 * take a slot, installs nothing else, dlclose()s the library, then (1) lets
 * the thread exit (its slot's thread-exit handler runs) and (2) raises a
 * SIGBUS that the application's own handler, installed before the library's,
 * must receive.  Without NODELETE the child dies of SIGSEGV.  Exit status 0
 * on success, 1 on failure, 77 (skip) without the shared library.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bakery.h"

struct api {
	int (*open)(const char *, unsigned, const struct bakery_config *, bakery_t **);
	int (*lock_open)(bakery_t *, const char *, enum bakery_algo, bakery_lock_t **);
	int (*lock)(bakery_lock_t *);
	int (*unlock)(bakery_lock_t *);
};

struct worker {
	struct api api;
	char name[64];
	int ready[2], leave[2];
	int rc;
};

static volatile sig_atomic_t app_sigbus;

static void app_handler(int sig)
{
	(void)sig;
	app_sigbus = 1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	bakery_t *b = NULL;
	bakery_lock_t *l = NULL;
	char c = 0;

	w->rc = w->api.open(w->name, BAKERY_CREATE, NULL, &b);
	if (!w->rc)
		w->rc = w->api.lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l);
	if (!w->rc)
		w->rc = w->api.lock(l);         /* takes a slot */
	if (!w->rc)
		w->rc = w->api.unlock(l);
	if (write(w->ready[1], &c, 1) != 1 || read(w->leave[0], &c, 1) < 0)
		w->rc = -1;
	return NULL;    /* the slot's thread-exit handler runs now */
}

static int child(const char *path, const char *name)
{
	struct worker w = { 0 };
	struct sigaction sa = { .sa_handler = app_handler };
	pthread_t th;
	void *h;
	char c = 0;

	snprintf(w.name, sizeof(w.name), "%s", name);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) || pipe(w.ready) || pipe(w.leave))
		return 1;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 1;
	*(void **)&w.api.open = dlsym(h, "bakery_open");
	*(void **)&w.api.lock_open = dlsym(h, "bakery_lock_open");
	*(void **)&w.api.lock = dlsym(h, "bakery_lock");
	*(void **)&w.api.unlock = dlsym(h, "bakery_unlock");
	if (!w.api.open || !w.api.lock_open || !w.api.lock || !w.api.unlock)
		return 1;
	if (pthread_create(&th, NULL, worker_main, &w) || read(w.ready[0], &c, 1) != 1 || w.rc)
		return 1;
	if (dlclose(h))
		return 1;
	if (write(w.leave[1], &c, 1) != 1 || pthread_join(th, NULL) || w.rc)
		return 1;
	raise(SIGBUS);
	return app_sigbus ? 0 : 1;
}

int main(void)
{
	const char *top = getenv("top_builddir");
	char path[4096], name[64];
	pid_t pid;
	int st;

	snprintf(path, sizeof(path), "%s/lib/.libs/libbakery.so.0", top ? top : ".");
	if (access(path, R_OK)) {
		printf("SKIP: no shared library at %s\n", path);
		return 77;
	}
	snprintf(name, sizeof(name), "/bkdlclose-%d", (int)getpid());
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(child(path, name));
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	shm_unlink(name);
	if (WIFSIGNALED(st)) {
		printf("FAIL: the child died of signal %d after dlclose\n", WTERMSIG(st));
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("FAIL: the child exited with %d\n", WEXITSTATUS(st));
		return 1;
	}
	printf("ok: after dlclose, a thread with a slot exited and SIGBUS reached the "
	       "application's handler\n");
	return 0;
}
