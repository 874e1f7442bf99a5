/* A hostile build step for arbiter's tests: it tries what a build must not do and prints what
   it got, one line each. targets.h (written by the test) names the host's resources:
   OUTSIDE (a file outside the tree), PORT (a TCP listener on the host's loopback) and MARKER
   (the argument of the daemon it leaves, found in /proc by the test if it survived). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "targets.h"

static pid_t children[300];

int main(void) {
  int fd, forks = 0, err = 0, i;
  struct sockaddr_in addr;
  pid_t pid;
  setvbuf(stdout, NULL, _IONBF, 0);
  fd = open(OUTSIDE, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  printf("outside: %s\n", fd >= 0 ? "written" : strerror(errno));
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(PORT);
  addr.sin_addr.s_addr = htonl(0x7f000001);
  fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    printf("network: socket: %s\n", strerror(errno));
  else
    printf("network: %s\n",
           connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 ? "connected" : strerror(errno));
  /* The daemon: a new session, out of the build's process group, sleeping for ever. */
  if ((pid = fork()) == 0) {
    setsid();
    if (fork() == 0) execl("/bin/sleep", "sleep", MARKER, (char *)NULL);
    _exit(0);
  }
  if (pid > 0) waitpid(pid, NULL, 0);
  /* Forks without bound: each child sleeps; stopped at the first refusal or at 300. */
  for (forks = 0; forks < 300; forks++) {
    pid = fork();
    if (pid < 0) {
      err = errno;
      break;
    }
    if (pid == 0) {
      pause();
      _exit(0);
    }
    children[forks] = pid;
  }
  printf("forks: %d (%s)\n", forks, err ? strerror(err) : "no refusal");
  for (i = 0; i < forks; i++) kill(children[i], SIGKILL);
  for (i = 0; i < forks; i++) waitpid(children[i], NULL, 0);
  return 0;
}
