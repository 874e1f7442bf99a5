/* A tree that does not build: `moves_played` is declared nowhere. */
#include <stdio.h>

int main(void) {
  printf("id name broken\n");
  return moves_played;
}
