// SPDX-License-Identifier: Apache-2.0
// --plot: false positives per absent-key lookup (the reads it wastes, summed over the levels it
// consults) and the cost of an absent-key lookup, against bits per key, one point per policy,
// drawn by gnuplot from a data file and a script written next to the PNG.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "db_bench_ext/report.h"

namespace db_bench_ext {

void WritePlot(const std::vector<PolicyResult>& results) {
  // One data block (and one legend entry) per policy with a filter and a measured rate.
  const std::string data = FLAGS_plot + ".dat";
  std::vector<std::string> titles;
  {
    std::ofstream out(data);
    for (const PolicyResult& pr : results) {
      const BenchResult* b = pr.AbsentKeyBench();
      if (b == nullptr || b->fp_per_lookup() <= 0 || pr.bits_per_key() <= 0) continue;
      const double ops = pr.OpsPerSec(b->benchmark->name);  // the median over --rounds, if any
      out << pr.bits_per_key() << " " << b->fp_per_lookup() << " " << (ops > 0 ? 1e6 / ops : 0)
          << "\n\n\n";
      std::string title = pr.uri;
      std::replace(title.begin(), title.end(), '\'', '"');
      titles.push_back(title);
    }
  }
  if (titles.empty()) {
    // ValidateFlags made sure there were absent-key lookups of filters: none had a false
    // positive, which a logarithmic axis cannot show. The results above stand.
    fprintf(stderr, "db_bench_ext: --plot: no false positives were measured; no plot drawn\n");
    std::remove(data.c_str());
    return;
  }
  auto plot = [&](int column, const char* point_type) {
    std::string cmd = "plot ";
    for (size_t i = 0; i < titles.size(); ++i) {
      cmd += (i ? ", '" : "'") + data + "' index " + std::to_string(i) +
             " using 1:" + std::to_string(column) + " with points pt " + point_type +
             " ps 2 title '" + titles[i] + "'";
    }
    return cmd + "\n";
  };
  const std::string script = FLAGS_plot + ".gp";
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1100,560 font ',10' noenhanced\n"
       << "set output '" << FLAGS_plot << "'\n"
       << "set multiplot layout 1,2\n"
       << "set offsets graph 0.15, graph 0.15, graph 0.15, graph 0.15\n"
       << "set xlabel 'filter bits per key (table properties)'\n"
       << "set grid\nset key below\n"
       << "set ylabel 'false positives per absent-key lookup (readmissing)'\nset logscale y\n"
       << "set title 'Memory against wasted reads'\n"
       << plot(2, "7") << "unset logscale y\nset yrange [0:*]\n"
       << "set offsets graph 0.15, graph 0.15, graph 0.15, 0\n"
       << "set ylabel 'microseconds per absent-key lookup (readmissing)'\n"
       << "set title 'Lookup cost of absent keys'\n"
       << plot(3, "5") << "unset multiplot\n";
  }
  const std::string cmd = "gnuplot '" + script + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    Fail("gnuplot failed to draw --plot '" + FLAGS_plot + "'");
  }
  std::remove(data.c_str());
  std::remove(script.c_str());
  printf("\nplot: %s\n", FLAGS_plot.c_str());
}

}  // namespace db_bench_ext
