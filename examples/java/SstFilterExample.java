// SPDX-License-Identifier: Apache-2.0
// Opens a database with sstfilter.Leveled:10 named by string, writes keys, flushes, looks up keys
// that were never written and prints how many storage reads the filters saved (RocksDB's
// statistics). Built and run by scripts/build-rocksjava.sh --test; see docs/java.md.
//
//   java -cp rocksdbjni-<version>-linux64.jar:sstfilter-java.jar:. SstFilterExample DB_DIR
import java.nio.charset.StandardCharsets;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Filter;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;
import org.sstfilter.SstFilters;

public class SstFilterExample {
  public static void main(final String[] args) throws RocksDBException {
    if (args.length != 1) {
      System.err.println("usage: SstFilterExample DB_DIR");
      System.exit(2);
    }
    final int keys = 100_000;
    try (Filter policy = SstFilters.filterPolicy("sstfilter.Leveled:10");
         Statistics statistics = new Statistics();
         Options options = new Options().setCreateIfMissing(true).setStatistics(statistics)) {
      options.setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(policy));
      SstFilters.addLeveledBudgetListener(options);
      try (RocksDB db = RocksDB.open(options, args[0]);
           FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
        for (int i = 0; i < keys; ++i) db.put(bytes("present" + i), bytes("value" + i));
        db.flush(flush);
        int missing = 0;
        for (int i = 0; i < keys; ++i) {
          if (db.get(bytes("present" + i)) == null) ++missing;
        }
        int found = 0;
        for (int i = 0; i < keys; ++i) {
          if (db.get(bytes("absent" + i)) != null) ++found;
        }
        final long saved = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
        System.out.printf("%d keys written, %d of them missing; %d absent keys looked up, %d found%n",
            keys, missing, keys, found);
        System.out.printf("storage reads saved by sstfilter.Leveled:10: %d (%.2f%% of the absent "
                + "lookups)%n",
            saved, 100.0 * saved / keys);
        if (missing != 0 || found != 0) System.exit(1);
      }
    }
  }

  private static byte[] bytes(final String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
