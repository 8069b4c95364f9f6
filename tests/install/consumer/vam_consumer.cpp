// A C++ user of the installed libvam: operator new must be libvam's (101
// objects: the vector's buffer and its 100 ints).
#include <alloclab/vam.h>

#include <cstdio>
#include <memory>
#include <vector>

int main() {
  vam_stats_t before{}, after{};
  vam_stats(&before);
  std::vector<std::unique_ptr<int>> v;
  v.reserve(100);
  for (int i = 0; i < 100; ++i) v.push_back(std::make_unique<int>(i));
  vam_stats(&after);
  std::printf("vam ok %ld\n", static_cast<long>(after.live_objects - before.live_objects));
  return 0;
}
