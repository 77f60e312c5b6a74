// SPDX-License-Identifier: Apache-2.0
#include "plugin/probe_counts.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/format.h"
#include "core/hash.h"

namespace sstfilter {

namespace {
constexpr size_t kIdBodyBytes = 64;

// This thread's filters since its last table file (plugin/probe_counts.h).
std::vector<BuiltFilter>& BuiltOnThisThread() {
  thread_local std::vector<BuiltFilter> built;
  return built;
}
}  // namespace

uint64_t FilterBlockId(const void* data, size_t size) {
  if (size <= kIdBodyBytes + kTrailerBytes) return KeyHash(data, size);
  unsigned char sample[kIdBodyBytes + kTrailerBytes];
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::memcpy(sample, bytes, kIdBodyBytes);
  std::memcpy(sample + kIdBodyBytes, bytes + size - kTrailerBytes, kTrailerBytes);
  return KeyHash(sample, sizeof(sample));
}

ProbeRegistry& ProbeRegistry::Global() {
  static ProbeRegistry* const registry = new ProbeRegistry();  // never destroyed: used at exit
  return *registry;
}

std::shared_ptr<ProbeCell> ProbeRegistry::Register(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::weak_ptr<ProbeCell>& slot = cells_[id];
  std::shared_ptr<ProbeCell> cell = slot.lock();
  if (cell == nullptr) {
    cell = std::make_shared<ProbeCell>();
    slot = cell;
  }
  any_.store(true, std::memory_order_relaxed);
  if (cells_.size() >= prune_at_) PruneLocked();
  return cell;
}

std::shared_ptr<ProbeCell> ProbeRegistry::Find(uint64_t id) {
  if (!any_.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = cells_.find(id);
  return it == cells_.end() ? nullptr : it->second.lock();
}

void ProbeRegistry::PruneLocked() {
  for (auto it = cells_.begin(); it != cells_.end();) {
    it = it->second.expired() ? cells_.erase(it) : std::next(it);
  }
  prune_at_ = std::max<size_t>(1024, 2 * cells_.size());
}

void NoteBuiltFilter(BuiltFilter filter) {
  std::vector<BuiltFilter>& built = BuiltOnThisThread();
  if (built.size() >= kMaxBuiltPerThread) built.clear();
  built.push_back(std::move(filter));
}

std::vector<BuiltFilter> TakeBuiltFilters() {
  std::vector<BuiltFilter> taken;
  taken.swap(BuiltOnThisThread());
  return taken;
}

}  // namespace sstfilter
