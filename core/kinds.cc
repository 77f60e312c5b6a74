#include "core/kinds.h"

namespace sstfilter {

const char* FilterKindName(FilterKind kind) {
  const char* name = "unknown";
  VisitKind(kind, [&](auto k) { name = decltype(k)::kName; });
  return name;
}

}  // namespace sstfilter
