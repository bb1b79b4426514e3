#include "report/html_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/html_escape.h"

namespace qpo::report::html {

namespace {

constexpr double kWidth = 600, kHeight = 320;
constexpr double kLeft = 70, kRight = 20, kTop = 30, kBottom = 50;

// A value range mapped onto a pixel range, linear or log10.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double p0 = 0, p1 = 1;
  double at(double v) const {
    double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
  bool contains(double v) const { return v >= lo && v <= hi && (!log || v > 0); }
};

Axis axis(double lo, double hi, bool log, double p0, double p1) {
  if (log && (lo <= 0 || hi <= 0)) log = false;
  if (!(hi > lo)) {  // one value: a range around it
    if (log) {
      lo /= 2;
      hi *= 2;
    } else {
      double pad = lo == 0 ? 1 : std::fabs(lo) / 2;
      lo -= pad;
      hi += pad;
    }
  }
  return {lo, hi, log, p0, p1};
}

std::vector<double> ticks(const Axis& a) {
  std::vector<double> out;
  if (a.log) {
    int first = static_cast<int>(std::floor(std::log10(a.lo))), last = static_cast<int>(std::ceil(std::log10(a.hi)));
    bool fine = last - first <= 2;
    for (int k = first; k <= last; ++k)
      for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        double v = m * std::pow(10.0, k);
        if (a.contains(v)) out.push_back(v);
      }
    if (out.size() < 2) out = {a.lo, a.hi};
    return out;
  }
  double raw = (a.hi - a.lo) / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag * (raw / mag < 1.5 ? 1 : raw / mag < 3.5 ? 2 : raw / mag < 7.5 ? 5 : 10);
  // Counted, not summed: near 1e20 a step of 2000 is below the spacing of doubles (16384), so
  // v += step would never move. A range of 5 raw steps takes at most 8 ticks; a tick that
  // rounds onto the one before is dropped.
  constexpr int kMostTicks = 12;
  double first = std::ceil(a.lo / step) * step;
  for (int i = 0; i < kMostTicks; ++i) {
    double v = first + i * step;
    if (!(v <= a.hi + step * 1e-9)) break;
    if (std::fabs(v) < step * 1e-9) v = 0;
    if (out.empty() || v > out.back()) out.push_back(v);
  }
  return out;
}

std::string tick_text(double v) {
  char b[32];
  if (std::fabs(v) >= 1e6 || (std::fabs(v) < 1e-3 && v != 0)) std::snprintf(b, sizeof b, "%.0e", v);
  else std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string px(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string list(const std::vector<double>& v) {
  std::string out;
  for (double x : v) out += (out.empty() ? "" : " ") + num(x);
  return out;
}

// The frame: title, axes with ticks and grid, axis labels. `bytes_x`: x ticks as sizes.
std::string frame(const std::string& title, const std::string& x_label, const std::string& y_label, const Axis& x,
                  const Axis& y, bool x_ticks = true) {
  std::string s;
  s += "<text class=\"title\" x=\"" + px(kWidth / 2) + "\" y=\"18\" text-anchor=\"middle\">" + escape(title) + "</text>\n";
  if (x_ticks)
    for (double t : ticks(x)) {
      std::string X = px(x.at(t));
      s += "<line class=\"grid\" x1=\"" + X + "\" x2=\"" + X + "\" y1=\"" + px(y.p0) + "\" y2=\"" + px(y.p1) + "\"/>";
      s += "<text class=\"tick\" x=\"" + X + "\" y=\"" + px(y.p0 + 16) + "\" text-anchor=\"middle\">" + tick_text(t) + "</text>\n";
    }
  for (double t : ticks(y)) {
    std::string Y = px(y.at(t));
    s += "<line class=\"grid\" x1=\"" + px(x.p0) + "\" x2=\"" + px(x.p1) + "\" y1=\"" + Y + "\" y2=\"" + Y + "\"/>";
    s += "<text class=\"tick\" x=\"" + px(x.p0 - 6) + "\" y=\"" + px(y.at(t) + 4) + "\" text-anchor=\"end\">" + tick_text(t) + "</text>\n";
  }
  s += "<line class=\"axis\" x1=\"" + px(x.p0) + "\" x2=\"" + px(x.p1) + "\" y1=\"" + px(y.p0) + "\" y2=\"" + px(y.p0) + "\"/>";
  s += "<line class=\"axis\" x1=\"" + px(x.p0) + "\" x2=\"" + px(x.p0) + "\" y1=\"" + px(y.p0) + "\" y2=\"" + px(y.p1) + "\"/>\n";
  s += "<text class=\"label\" x=\"" + px((x.p0 + x.p1) / 2) + "\" y=\"" + px(kHeight - 10) + "\" text-anchor=\"middle\">" +
       escape(x_label) + "</text>";
  s += "<text class=\"label\" transform=\"translate(16 " + px((y.p0 + y.p1) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       escape(y_label) + "</text>\n";
  return s;
}

std::string open_svg(const std::string& cls, const std::string& attrs) {
  return "<svg class=\"plot " + cls + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(kHeight) + "\" width=\"" + px(kWidth) +
         "\" height=\"" + px(kHeight) + "\" role=\"img\"" + attrs + ">\n";
}

std::string attr(const char* name, const std::string& value) { return std::string(" ") + name + "=\"" + escape(value) + "\""; }

// Threshold lines: vertical (on x) or horizontal (on y); off-plot ones named in a note.
std::string threshold_lines(const std::vector<ThresholdLine>& lines, const Axis& x, const Axis& y, bool vertical) {
  std::string s;
  int off = 0;
  for (const auto& t : lines) {
    const Axis& a = vertical ? x : y;
    std::string cls = std::string("threshold") + (t.passed ? "" : " missed");
    s += "<g class=\"" + cls + "\"" + attr("data-name", t.name) + attr("data-field", t.field) +
         attr("data-limit", num(t.limit)) + ">";
    std::string label = t.name + " " + num(t.limit) + " " + t.unit;
    if (a.contains(t.limit)) {
      std::string p = px(a.at(t.limit));
      if (vertical) {
        s += "<line x1=\"" + p + "\" x2=\"" + p + "\" y1=\"" + px(y.p0) + "\" y2=\"" + px(y.p1) + "\"/>";
        s += "<text x=\"" + px(a.at(t.limit) + 3) + "\" y=\"" + px(y.p1 + 12) + "\">" + escape(label) + "</text>";
      } else {
        s += "<line x1=\"" + px(x.p0) + "\" x2=\"" + px(x.p1) + "\" y1=\"" + p + "\" y2=\"" + p + "\"/>";
        s += "<text x=\"" + px(x.p1 - 3) + "\" y=\"" + px(a.at(t.limit) - 3) + "\" text-anchor=\"end\">" + escape(label) + "</text>";
      }
    } else {
      s += "<text x=\"" + px(x.p1) + "\" y=\"" + px(y.p1 + 12 + 12 * off++) + "\" text-anchor=\"end\">" + escape(label) +
           " (off the plot)</text>";
    }
    s += "</g>\n";
  }
  return s;
}

// The latency x axis: the samples' range, widened to a threshold within 10x of it.
Axis latency_axis(const LatencyDistribution& d, const std::vector<ThresholdLine>& lines) {
  double lo = d.edges.empty() ? 0 : d.edges.front(), hi = d.edges.empty() ? 1 : d.edges.back();
  bool log = lo > 0 && hi / lo > 4;
  for (const auto& t : lines)
    if (t.limit > 0 && t.limit <= hi * 10 && t.limit >= lo / 10) {
      lo = std::min(lo, t.limit);
      hi = std::max(hi, t.limit * 1.05);
    }
  if (!log && !(hi > lo)) return axis(lo, hi, false, kLeft, kWidth - kRight);
  if (!log) lo = std::max(0.0, lo - (hi - lo) * 0.02);
  return axis(lo, hi, log, kLeft, kWidth - kRight);
}

std::string size_name(double bytes) {
  if (bytes >= 1 << 20 && std::fmod(bytes, 1 << 20) == 0) return num(bytes / (1 << 20)) + "Mi";
  if (bytes >= 1024 && std::fmod(bytes, 1024) == 0) return num(bytes / 1024) + "Ki";
  return num(bytes);
}

}  // namespace

std::string svg_histogram(const std::string& workload, const LatencyDistribution& d, const std::vector<ThresholdLine>& lines) {
  std::vector<double> counts(d.counts.begin(), d.counts.end());
  std::string s = open_svg("hist", attr("data-workload", workload) + attr("data-size", std::to_string(d.size)) +
                                       attr("data-samples", std::to_string(d.samples)) + attr("data-edges", list(d.edges)) +
                                       attr("data-counts", list(counts)));
  Axis x = latency_axis(d, lines);
  double top = counts.empty() ? 1 : *std::max_element(counts.begin(), counts.end());
  Axis y = axis(0, top * 1.05, false, kHeight - kBottom, kTop);
  std::string title = "latency histogram, " + std::to_string(d.samples) + " samples";
  if (d.size) title += ", " + std::to_string(d.size) + " B";
  s += frame(title, std::string("latency (usec") + (x.log ? ", log scale)" : ")"), "samples", x, y);
  for (size_t i = 0; i < d.counts.size(); ++i) {
    double x0 = x.at(d.edges[i]), x1 = x.at(d.edges[i + 1]);
    double y1 = y.at(static_cast<double>(d.counts[i]));
    s += "<rect class=\"bar\" x=\"" + px(x0) + "\" y=\"" + px(y1) + "\" width=\"" + px(std::max(1.0, x1 - x0 - 0.5)) +
         "\" height=\"" + px(y.p0 - y1) + "\"><title>" + num(d.edges[i]) + " - " + num(d.edges[i + 1]) + " usec: " +
         std::to_string(d.counts[i]) + "</title></rect>";
  }
  s += "\n" + threshold_lines(lines, x, y, true);
  return s + "</svg>\n";
}

std::string svg_cdf(const std::string& workload, const LatencyDistribution& d, const std::vector<ThresholdLine>& lines) {
  std::string points;
  for (const auto& [u, f] : d.cdf) points += (points.empty() ? "" : " ") + num(u) + ":" + num(f);
  std::string s = open_svg("cdf", attr("data-workload", workload) + attr("data-size", std::to_string(d.size)) +
                                      attr("data-samples", std::to_string(d.samples)) + attr("data-cdf", points));
  Axis x = latency_axis(d, lines);
  Axis y = axis(0, 1, false, kHeight - kBottom, kTop);
  std::string title = "latency CDF, " + std::to_string(d.samples) + " samples";
  if (d.size) title += ", " + std::to_string(d.size) + " B";
  s += frame(title, std::string("latency (usec") + (x.log ? ", log scale)" : ")"), "share of samples <= latency", x, y);
  std::string path;
  double prev = 0;
  for (const auto& [u, f] : d.cdf) {  // a step function: flat, then up at each sample
    std::string X = px(x.at(u));
    path += (path.empty() ? "M" + X + " " + px(y.at(0)) : " L" + X + " " + px(y.at(prev))) + " L" + X + " " + px(y.at(f));
    prev = f;
  }
  if (!path.empty()) s += "<path class=\"line\" d=\"" + path + "\"/>\n";
  s += threshold_lines(lines, x, y, true);
  return s + "</svg>\n";
}

std::string svg_bw_sizes(const std::string& workload, const std::vector<std::pair<double, double>>& size_bw,
                         const std::vector<ThresholdLine>& lines) {
  std::vector<double> sizes, bws;
  for (const auto& [sz, bw] : size_bw) {
    sizes.push_back(sz);
    bws.push_back(bw);
  }
  std::string s = open_svg("bw-size", attr("data-workload", workload) + attr("data-sizes", list(sizes)) + attr("data-bw", list(bws)));
  double lo = sizes.empty() ? 1 : *std::min_element(sizes.begin(), sizes.end());
  double hi = sizes.empty() ? 2 : *std::max_element(sizes.begin(), sizes.end());
  Axis x = axis(lo / 1.3, hi * 1.3, true, kLeft, kWidth - kRight);
  double top = bws.empty() ? 1 : *std::max_element(bws.begin(), bws.end());
  for (const auto& t : lines) top = std::max(top, t.limit);
  Axis y = axis(0, top * 1.1 > 0 ? top * 1.1 : 1, false, kHeight - kBottom, kTop);
  s += frame("bandwidth against message size", "message size (bytes, log scale)", "BW average (MB/s, MB = 2^20)", x, y, false);
  for (double sz : sizes) {
    std::string X = px(x.at(sz));
    s += "<text class=\"tick\" x=\"" + X + "\" y=\"" + px(y.p0 + 16) + "\" text-anchor=\"middle\">" + size_name(sz) + "</text>";
  }
  std::string poly;
  for (size_t i = 0; i < sizes.size(); ++i) poly += (poly.empty() ? "" : " ") + px(x.at(sizes[i])) + "," + px(y.at(bws[i]));
  s += "\n<polyline class=\"line\" points=\"" + poly + "\"/>\n";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += "<circle class=\"point\" cx=\"" + px(x.at(sizes[i])) + "\" cy=\"" + px(y.at(bws[i])) + "\" r=\"4\"><title>" +
         num(sizes[i]) + " B: " + num(bws[i]) + " MB/s</title></circle>";
  s += "\n" + threshold_lines(lines, x, y, false);
  return s + "</svg>\n";
}

std::string svg_qp_bars(const std::string& group, const std::vector<std::pair<std::string, double>>& qp_bw,
                        const std::vector<ThresholdLine>& lines) {
  std::string names;
  std::vector<double> bws;
  for (const auto& [name, bw] : qp_bw) {
    names += (names.empty() ? "" : " ") + name;
    bws.push_back(bw);
  }
  std::string s = open_svg("qp-bars", attr("data-group", group) + attr("data-qps", names) + attr("data-bw", list(bws)));
  Axis x = axis(0, static_cast<double>(std::max<size_t>(qp_bw.size(), 1)), false, kLeft, kWidth - kRight);
  double top = bws.empty() ? 1 : *std::max_element(bws.begin(), bws.end());
  for (const auto& t : lines) top = std::max(top, t.limit);
  Axis y = axis(0, top * 1.1 > 0 ? top * 1.1 : 1, false, kHeight - kBottom, kTop);
  s += frame("bandwidth per QP of group " + group, "QP", "BW average (MB/s, MB = 2^20)", x, y, false);
  double slot = (x.p1 - x.p0) / static_cast<double>(std::max<size_t>(qp_bw.size(), 1));
  for (size_t i = 0; i < qp_bw.size(); ++i) {
    double x0 = x.p0 + slot * static_cast<double>(i) + slot * 0.1, y1 = y.at(bws[i]);
    s += "<rect class=\"bar\" x=\"" + px(x0) + "\" y=\"" + px(y1) + "\" width=\"" + px(slot * 0.8) + "\" height=\"" +
         px(y.p0 - y1) + "\"><title>" + escape(qp_bw[i].first) + ": " + num(bws[i]) + " MB/s</title></rect>";
    if (qp_bw.size() <= 32)
      s += "<text class=\"tick\" x=\"" + px(x0 + slot * 0.4) + "\" y=\"" + px(y.p0 + 16) + "\" text-anchor=\"middle\">" +
           escape(qp_bw[i].first) + "</text>";
  }
  s += "\n" + threshold_lines(lines, x, y, false);
  return s + "</svg>\n";
}

}  // namespace qpo::report::html
