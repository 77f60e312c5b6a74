// SPDX-License-Identifier: Apache-2.0
// AccountTreeForAdvice (include/sstfilter/leveled_budget.h): the accounts of an existing tree as
// sstfilter.Leveled would settle them, for tools that build filters outside RocksDB.
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/table.h>

#include <exception>
#include <string>
#include <vector>

#include "plugin/leveled_budget.h"
#include "plugin/listener_channel.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"
#include "sstfilter/leveled_budget.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::DB;

ROCKSDB_NAMESPACE::Status AccountTreeForAdvice(
    DB* db, const std::string& cf_name, const ROCKSDB_NAMESPACE::FilterPolicy& policy,
    const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& info_log) {
  using ROCKSDB_NAMESPACE::Status;
  // By name (Customizable::CheckedCast): RocksDB builds without RTTI host sstfilter built in.
  const auto* leveled = policy.CheckedCast<LeveledPolicy>();
  if (leveled == nullptr) {
    return Status::InvalidArgument(std::string("AccountTreeForAdvice: ") + policy.Name() +
                                   " is not sstfilter.Leveled");
  }
  if (db == nullptr || info_log == nullptr) {
    return Status::InvalidArgument("AccountTreeForAdvice: needs a database and a logger");
  }
  try {
    PublishAccountsAs(db, cf_name, info_log);
    const TreeId tree = LoggerTree(info_log.get(), cf_name);
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
    db->GetLiveFilesMetaData(&live);
    KeyRange below_level0;
    for (const auto& f : live) {
      if (f.column_family_name != cf_name || f.level < 1) continue;
      below_level0.Add(f.smallestkey);
      below_level0.Add(f.largestkey);
    }
    if (!below_level0.empty()) leveled->RecordEarlierFlush(tree, below_level0);
    TreeAccounts accounts;
    if (!Ledger::Global().Get(tree, &accounts)) {
      return Status::Aborted("AccountTreeForAdvice: the accounts were not kept");
    }
    // Under a memory budget, what it buys over this tree (the database's own block cache for a
    // share of one); one account of it, so level 0's fullest is what it holds now.
    double bits_per_key = leveled->BudgetBitsPerKey();
    if (leveled->GetMemoryBudget().Given()) {
      const ROCKSDB_NAMESPACE::Options options = db->GetOptions();
      const auto* table =
          options.table_factory == nullptr
              ? nullptr
              : options.table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
      const Result<uint64_t> bytes = table == nullptr
                                         ? Result<uint64_t>(Err(std::string("no table options")))
                                         : leveled->GetMemoryBudget().BytesFor(*table);
      if (bytes.ok()) {
        bits_per_key =
            BitsPerKeyWithin(bytes.value(), SumAccounts({tree}, nullptr).keys, bits_per_key);
      }
    }
    const Result<std::vector<double>> bits =
        SteadyBitsPerKey(accounts, bits_per_key, leveled->GetMemoryBudget().Given());
    if (!bits.ok()) return Status::InvalidArgument("AccountTreeForAdvice: " + bits.error());
    // Each level's filters as the policy would have made them: nothing to steer.
    for (size_t i = 0; i < accounts.levels.size() && i < bits.value().size(); ++i) {
      LevelAccount& a = accounts.levels[i];
      a.filter_bytes = static_cast<uint64_t>(static_cast<double>(a.keys) * bits.value()[i] / 8);
      a.unmeasured_keys = 0;  // every file's filter is the policy's now: all measured
    }
    Ledger::Global().Publish(tree, info_log, std::move(accounts));
  } catch (const std::exception& e) {
    return Status::Aborted(std::string("AccountTreeForAdvice: ") + e.what());
  }
  return Status::OK();
}

}  // namespace sstfilter
