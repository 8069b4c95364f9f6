// A C++ user of the installed libreap, through its RAII face.
#include <alloclab/reap.hpp>

#include <cstdio>

int main() {
  alloclab::Reap r;
  int *a = static_cast<int *>(r.malloc(3 * sizeof(int)));
  a[0] = a[1] = a[2] = 1;
  reap_stats_t s;
  reap_stats(r.get(), &s);
  std::printf("reap ok %d\n", (a[0] + a[1] + a[2]) * static_cast<int>(s.live_objects));
  return 0;
}
