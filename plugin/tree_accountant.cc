// SPDX-License-Identifier: Apache-2.0
#include "plugin/tree_accountant.h"

#include <algorithm>
#include <utility>

#include "plugin/level_probes.h"

namespace sstfilter {
namespace {

std::string PathOf(const ROCKSDB_NAMESPACE::LiveFileMetaData& f) {
  return f.directory + "/" + f.relative_filename;
}

}  // namespace

FileFilter FilterOf(const ROCKSDB_NAMESPACE::TableProperties& p) {
  FileFilter f;
  f.filter_entries = p.num_filter_entries;
  f.filter_bytes = p.filter_size;
  return f;
}

void TreeAccountant::FileCreated(const std::string& db_name, const std::string& path,
                                 FileFilter filter) {
  std::lock_guard<std::mutex> lock(mu_);
  BoundedEntry(databases_, db_name, kMaxDatabases).files[path] = std::move(filter);
}

void TreeAccountant::Remember(const std::string& db_name, const std::string& session,
                              const std::string& path, const FileFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  RememberLocked(SessionLocked(db_name, session, nullptr), path, filter);
}

void TreeAccountant::CompactionBegan(
    const std::string& db_name, const std::string& session, const std::string& cf_name, int job_id,
    int output_level, const std::vector<uint64_t>& input_file_numbers,
    const ROCKSDB_NAMESPACE::TablePropertiesCollection& properties) {
  std::lock_guard<std::mutex> lock(mu_);
  Session& s = SessionLocked(db_name, session, nullptr);
  RememberAllLocked(s, properties);
  Compaction& c = TreeOf(s, cf_name).running[job_id];
  c = Compaction{};
  c.output_level = output_level;
  c.inputs = input_file_numbers;
}

void TreeAccountant::CompactionCompleted(
    const std::string& db_name, const std::string& session, const std::string& cf_name, int job_id,
    const ROCKSDB_NAMESPACE::TablePropertiesCollection& properties) {
  std::lock_guard<std::mutex> lock(mu_);
  Session& s = SessionLocked(db_name, session, nullptr);
  RememberAllLocked(s, properties);
  TreeOf(s, cf_name).running.erase(job_id);
}

bool TreeAccountant::TableInCreationOf(const std::string& db_name, const std::string& cf_name,
                                       TableInCreation* table) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = databases_.find(db_name);
  if (it == databases_.end() || it->second.id.empty()) return false;  // no event has named it yet
  *table = TableInCreation{DatabaseTree(db_name, it->second.id, cf_name), it->second.logger};
  return true;
}

TreeAccounts TreeAccountant::Account(const std::string& db_name, const std::string& session,
                                     const void* logger, const std::string& cf_name,
                                     const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live,
                                     const std::map<std::string, FileFilter>& learned,
                                     bool changed) {
  std::lock_guard<std::mutex> lock(mu_);
  Session& s = SessionLocked(db_name, session, logger);
  Tree& tree = TreeOf(s, cf_name);
  tree.changes += changed ? 1 : 0;
  TreeAccounts accounts;
  accounts.changes = tree.changes;
  LiveCounts counts = CountLiveFiles(s, tree, cf_name, live, learned, changed, &accounts);
  BlendCountedProbes(counts, changed, &tree, &accounts);
  PeakLevel0(Level0InPlace(std::move(counts), tree, accounts), &tree, &accounts);
  return accounts;
}

std::vector<std::string> TreeAccountant::ForgetTreesWithoutFiles(
    const std::string& db_name, const std::string& session, const std::string& accounted,
    const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live) {
  std::lock_guard<std::mutex> lock(mu_);
  Session& s = SessionLocked(db_name, session, nullptr);
  std::set<std::string> with_files;
  for (const auto& f : live) with_files.insert(f.column_family_name);
  std::vector<std::string> forgotten;
  for (auto it = s.trees.begin(); it != s.trees.end();) {
    // A compaction begun since `live` was read has files, which a newer account will see.
    if (it->first == accounted || with_files.count(it->first) != 0 || !it->second.running.empty()) {
      ++it;
      continue;
    }
    forgotten.push_back(it->first);
    it = s.trees.erase(it);
  }
  return forgotten;
}

std::set<std::string> TreeAccountant::UnknownFiles(
    const std::string& db_name, const std::string& session, const std::string& cf_name,
    const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live) {
  std::set<std::string> unknown;
  std::lock_guard<std::mutex> lock(mu_);
  const Session& s = SessionLocked(db_name, session, nullptr);
  for (const auto& f : live) {
    if (f.column_family_name != cf_name) continue;
    std::string path = PathOf(f);
    if (s.files.count(path) == 0) unknown.insert(std::move(path));
  }
  return unknown;
}

bool TreeAccountant::KnownOrLearned(const std::map<std::string, FileFilter>& known,
                                    const std::map<std::string, FileFilter>& learned,
                                    const std::string& path, bool in_column_family,
                                    FileFilter* filter) {
  const auto it = known.find(path);
  if (it != known.end()) {
    *filter = it->second;
    return true;
  }
  if (!in_column_family) return false;  // measured when its own column family's account needs it
  const auto l = learned.find(path);
  if (l != learned.end()) {
    *filter = l->second;
  } else {
    filter->measured = false;  // kept as such: not asked for again
  }
  return true;
}

void TreeAccountant::SampleProbes(int level, bool first_account, bool changed, FileFilter* filter,
                                  LiveCounts* counts) {
  if (filter->cells.empty()) return;
  const uint64_t now = filter->SampledNow();
  if (counts->sampled.size() <= static_cast<size_t>(level)) counts->sampled.resize(level + 1);
  const double delta = static_cast<double>(now >= filter->sampled ? now - filter->sampled : 0);
  counts->sampled[level] += delta;
  filter->sampled = now;
  if (!first_account) {
    filter->exposed_probes = filter->exposed_probes * (changed ? kCountDecay : 1) + delta;
  }
}

TreeAccountant::LiveCounts TreeAccountant::CountLiveFiles(
    Session& s, const Tree& tree, const std::string& cf_name,
    const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live,
    const std::map<std::string, FileFilter>& learned, bool changed, TreeAccounts* accounts) {
  LiveCounts counts;
  std::vector<LevelAccount>& levels = accounts->levels;
  std::map<uint64_t, int> rewritten;  // input file number -> the level its keys are going to
  for (const auto& [job, c] : tree.running) {
    for (const uint64_t number : c.inputs) rewritten[number] = c.output_level;
  }
  std::map<std::string, FileFilter>& known = s.files;
  std::map<std::string, FileFilter> still_live;
  std::vector<std::pair<FileFilter*, size_t>> counted;  // and their ranges, to expose
  for (const auto& f : live) {
    const std::string path = PathOf(f);
    FileFilter filter;
    if (!KnownOrLearned(known, learned, path, f.column_family_name == cf_name, &filter)) continue;
    const bool first_account = !filter.seen_live;
    filter.seen_live = true;
    if (f.column_family_name != cf_name || f.level < 0) {
      still_live[path] = std::move(filter);
      continue;
    }
    const uint64_t file_keys =
        filter.measured && filter.filter_entries > 0 ? filter.filter_entries : f.num_entries;
    // Bytewise, whichever way the comparator orders the two ends (a reverse comparator).
    const bool ordered = !(f.largestkey < f.smallestkey);
    const std::string& smallest = ordered ? f.smallestkey : f.largestkey;
    const std::string& largest = ordered ? f.largestkey : f.smallestkey;
    SampleProbes(f.level, first_account, changed, &filter, &counts);
    const auto input = rewritten.find(f.file_number);
    const int level = std::max(0, input == rewritten.end() ? f.level : input->second);
    if (levels.size() <= static_cast<size_t>(level)) levels.resize(level + 1);
    if (input != rewritten.end()) {
      levels[level].pending_keys += file_keys;
      if (filter.measured) levels[level].pending_filter_bytes += filter.filter_bytes;
    } else {
      AddFile(filter, file_keys, &levels[level]);
    }
    if (f.level == 0) {
      AddFile(filter, file_keys, &counts.level0_in_place);
      counts.level0_rewritten |= input != rewritten.end();
    }
    counts.ranges.push_back({level, f.level, static_cast<double>(file_keys), smallest, largest,
                             !filter.cells.empty(), filter.exposed_probes});
    FileFilter& kept = still_live[path] = std::move(filter);
    if (!kept.cells.empty() && !first_account) {
      counted.emplace_back(&kept, counts.ranges.size() - 1);
    }
  }
  // Each counted file's exposure: the probes sampled on the tree's counted files since the last
  // account, for those live at both.
  double sampled = 0;
  for (const double n : counts.sampled) sampled += n;
  for (const auto& [file, range] : counted) {
    file->exposure = file->exposure * (changed ? kCountDecay : 1) + sampled;
    counts.ranges[range].exposure = file->exposure;
  }
  // Files reported created that are not live yet.
  for (auto& [path, filter] : known) {
    if (!filter.seen_live && ++filter.accounts_unseen <= kMaxAccountsUnseen &&
        still_live.count(path) == 0) {
      still_live.emplace(path, std::move(filter));
    }
  }
  known.swap(still_live);
  if (!counted.empty()) {
    accounts->heat = std::make_shared<const std::vector<FileRange>>(counts.ranges);
  }
  return counts;
}

void TreeAccountant::AddFile(const FileFilter& filter, uint64_t file_keys, LevelAccount* level) {
  level->keys += file_keys;
  if (!filter.measured) {
    level->unmeasured_keys += file_keys;
    return;
  }
  level->filter_bytes += filter.filter_bytes;
  if (filter.filter_bytes > 0) {
    ++level->filter_files;
    level->filter_keys += file_keys;
  }
}

void TreeAccountant::BlendCountedProbes(const LiveCounts& counts, bool changed, Tree* tree,
                                        TreeAccounts* accounts) {
  std::vector<LevelAccount>& levels = accounts->levels;
  std::vector<double>& counted = tree->counted;
  counted.resize(std::max(counted.size(), std::max(counts.sampled.size(), levels.size())), 0);
  for (size_t i = 0; i < counted.size(); ++i) {
    counted[i] = counted[i] * (changed ? kCountDecay : 1) +
                 (i < counts.sampled.size() ? counts.sampled[i] : 0);
  }
  if (levels.size() < counted.size()) levels.resize(counted.size());
  const std::vector<double> probes =
      BlendProbes(counts.ranges, levels.size(), TreeSamples(*tree), &accounts->counted_weight);
  for (size_t i = 0; i < levels.size(); ++i) {
    levels[i].probes = probes[i];
    levels[i].counted_probes = counted[i];
  }
}

double TreeAccountant::TreeSamples(const Tree& tree) {
  double samples = 0;
  for (const double n : tree.counted) samples += n;
  return samples;
}

LevelAccount TreeAccountant::Level0InPlace(LiveCounts&& counts, const Tree& tree,
                                           const TreeAccounts& accounts) {
  if (!counts.level0_rewritten) {
    return accounts.levels.empty() ? LevelAccount{} : accounts.levels[0];
  }
  std::vector<FileRange> ranges = std::move(counts.ranges);
  for (FileRange& r : ranges) r.level = r.level_now;
  double weight = 0;
  const std::vector<double> probes =
      BlendProbes(ranges, std::max<size_t>(accounts.levels.size(), 1), TreeSamples(tree), &weight);
  LevelAccount level0 = counts.level0_in_place;
  level0.probes = probes.empty() ? 0 : probes[0];
  level0.counted_probes = tree.counted.empty() ? 0 : tree.counted[0];
  return level0;
}

void TreeAccountant::PeakLevel0(const LevelAccount& level0, Tree* tree, TreeAccounts* accounts) {
  tree->level0.push_back(level0);
  if (tree->level0.size() > TreeAccounts::kLevel0Window) tree->level0.pop_front();
  for (const LevelAccount& a : tree->level0) {
    if (a.keys + a.pending_keys >=
        accounts->level0_peak.keys + accounts->level0_peak.pending_keys) {
      accounts->level0_peak = a;
    }
  }
}

void TreeAccountant::RememberLocked(Session& s, const std::string& path, const FileFilter& f) {
  FileFilter& known = s.files[path];
  known.filter_entries = f.filter_entries;
  known.filter_bytes = f.filter_bytes;
  known.measured = true;
}

void TreeAccountant::RememberAllLocked(
    Session& s, const ROCKSDB_NAMESPACE::TablePropertiesCollection& properties) {
  for (const auto& [path, props] : properties) {
    if (props != nullptr) RememberLocked(s, path, FilterOf(*props));
  }
}

TreeAccountant::Session& TreeAccountant::SessionLocked(const std::string& db_name,
                                                       const std::string& id, const void* logger) {
  Session& s = BoundedEntry(databases_, db_name, kMaxDatabases);
  if (!id.empty() && s.id != id) {
    s = Session{};
    s.id = id;
  }
  if (logger != nullptr) s.logger = logger;
  return s;
}
TreeAccountant::Tree& TreeAccountant::TreeOf(Session& s, const std::string& cf_name) {
  return BoundedEntry(s.trees, cf_name, kMaxDatabases);
}

}  // namespace sstfilter
