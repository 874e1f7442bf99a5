#include "match/time_control.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/strings.h"

namespace arbiter::match {
namespace {

// Seconds ("7200", "0.1", "1.") to milliseconds; rejects negatives and junk.
bool ParseSeconds(std::string_view s, Millis& out) {
  if (s.empty()) return false;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !(v >= 0) || v > 1e9) return false;
  out = Millis(std::llround(v * 1000));
  return true;
}

template <typename T>
bool ParseCount(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out > 0;
}

std::string Seconds(Millis ms) {
  std::string s = Cat(ms.count() / 1000);
  if (int64_t frac = ms.count() % 1000; frac) {
    std::string f = Cat(frac + 1000).substr(1);
    while (f.back() == '0') f.pop_back();
    s += Cat(".", f);
  }
  return s;
}

// The periods of a kClock control: "40/60+1:30+1" (each period's increment once any has one;
// the b/d suffix when `suffix`), "40/60:30", "*60".
std::string PeriodsText(const TimeControl& tc, bool suffix) {
  if (tc.sandclock) return Cat("*", Seconds(tc.periods.empty() ? Millis(0) : tc.periods[0].time));
  bool any = false;
  for (const TcPeriod& p : tc.periods) any |= p.increment.count() > 0;
  std::string s;
  for (const TcPeriod& p : tc.periods) {
    if (!s.empty()) s += ':';
    if (p.moves) s += Cat(p.moves, "/");
    s += Seconds(p.time);
    if (!any) continue;
    s += Cat("+", Seconds(p.increment));
    if (suffix && p.increment.count() > 0 && tc.bonus == TimeControl::Bonus::kBronstein) s += 'b';
    if (suffix && p.increment.count() > 0 && tc.bonus == TimeControl::Bonus::kSimpleDelay) s += 'd';
  }
  return s;
}

absl::Status TcError(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(Cat("time control '", text, "': ", why));
}

}  // namespace

absl::StatusOr<TimeControl> ParseTimeControl(std::string_view text) {
  TimeControl tc;
  std::string_view t = Strip(text);
  if (t.empty()) return TcError(text, "empty");
  if (t.find('=') != std::string_view::npos) {
    bool have_limit = false;
    for (std::string_view part : Split(t, ',')) {
      size_t eq = part.find('=');
      if (eq == std::string_view::npos) return TcError(text, Cat("'", part, "' is not key=value"));
      std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
      if (have_limit && key != "forfeit")
        return TcError(text, "give one of movetime=, depth=, nodes=");
      if (key == "movetime") {
        if (!ParseSeconds(value, tc.movetime) || tc.movetime.count() <= 0)
          return TcError(text, Cat("movetime '", value, "' is not a positive number of seconds"));
        tc.kind = TimeControl::Kind::kMoveTime;
        have_limit = true;
      } else if (key == "depth") {
        if (!ParseCount(value, tc.depth) || tc.depth > 1000)
          return TcError(text, Cat("depth '", value, "' is not a depth in 1..1000"));
        tc.kind = TimeControl::Kind::kDepth;
        have_limit = true;
      } else if (key == "nodes") {
        if (!ParseCount(value, tc.nodes))
          return TcError(text, Cat("nodes '", value, "' is not a positive count"));
        tc.kind = TimeControl::Kind::kNodes;
        have_limit = true;
      } else if (key == "forfeit") {
        if (!ParseCount(value, tc.forfeit_after) || tc.forfeit_after > 1000)
          return TcError(text, Cat("forfeit '", value, "' is not a count in 1..1000"));
      } else {
        return TcError(text, Cat("unknown key '", key, "' (movetime, forfeit, depth, nodes)"));
      }
    }
    if (!have_limit) return TcError(text, "forfeit= needs movetime=");
    if (tc.forfeit_after && tc.kind != TimeControl::Kind::kMoveTime)
      return TcError(text, "forfeit= applies only to movetime=");
    return tc;
  }
  if (t[0] == '*') {
    // Sandclock (the PGN standard's "*seconds"): one glass, no increment.
    TcPeriod period;
    if (!ParseSeconds(t.substr(1), period.time) || period.time.count() == 0)
      return TcError(text, Cat("sandclock '", t.substr(1), "' is not a positive time in seconds"));
    tc.sandclock = true;
    tc.periods.push_back(period);
    return tc;
  }
  std::vector<std::string_view> parts = Split(t, ':');
  std::vector<bool> has_increment;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    TcPeriod period;
    if (size_t slash = p.find('/'); slash != std::string_view::npos) {
      if (!ParseCount(p.substr(0, slash), period.moves) || period.moves > 10000)
        return TcError(text,
                       Cat("period ", i + 1, ": '", p.substr(0, slash), "' is not a move count"));
      p.remove_prefix(slash + 1);
    } else if (i + 1 < parts.size()) {
      return TcError(text, Cat("period ", i + 1, " has no move count (only the last may omit it)"));
    }
    has_increment.push_back(false);
    if (size_t plus = p.find('+'); plus != std::string_view::npos) {
      std::string_view inc = p.substr(plus + 1);
      TimeControl::Bonus bonus = TimeControl::Bonus::kFischer;
      if (!inc.empty() && (inc.back() == 'b' || inc.back() == 'd')) {
        bonus =
            inc.back() == 'b' ? TimeControl::Bonus::kBronstein : TimeControl::Bonus::kSimpleDelay;
        inc.remove_suffix(1);
      }
      if (!ParseSeconds(inc, period.increment))
        return TcError(text, Cat("period ", i + 1, ": increment '", p.substr(plus + 1),
                                 "' is not seconds (with an optional b or d suffix)"));
      if (period.increment.count() > 0) {
        if (tc.bonus != TimeControl::Bonus::kNone && tc.bonus != bonus)
          return TcError(text,
                         "every period's increment must be of the same kind (Fischer, b or d)");
        tc.bonus = bonus;
      }
      has_increment.back() = true;
      p = p.substr(0, plus);
    }
    if (!ParseSeconds(p, period.time))
      return TcError(text, Cat("period ", i + 1, ": '", p, "' is not a time in seconds"));
    tc.periods.push_back(period);
  }
  // An increment on the last period only is every period's (the `--tc` reading since before
  // periods had their own); docs/rules.md, "Clocks".
  if (std::count(has_increment.begin(), has_increment.end(), true) == 1 && has_increment.back())
    for (TcPeriod& p : tc.periods) p.increment = tc.periods.back().increment;
  if (tc.periods[0].time.count() == 0 && tc.periods[0].increment.count() == 0)
    return TcError(text, "no time at all");
  return tc;
}

TimeControl ScaleTimeControl(TimeControl tc, double factor) {
  auto scale = [factor](Millis& t) {
    if (t.count() > 0) t = Millis(std::max<int64_t>(1, std::llround(double(t.count()) * factor)));
  };
  for (TcPeriod& p : tc.periods) {
    scale(p.time);
    scale(p.increment);
  }
  scale(tc.movetime);
  return tc;
}

std::string TimeControl::ToString() const {
  switch (kind) {
    case Kind::kMoveTime:
      return forfeit_after ? Cat("movetime=", Seconds(movetime), ",forfeit=", forfeit_after)
                           : Cat("movetime=", Seconds(movetime));
    case Kind::kDepth:
      return Cat("depth=", depth);
    case Kind::kNodes:
      return Cat("nodes=", nodes);
    case Kind::kClock:
      break;
  }
  return PeriodsText(*this, /*suffix=*/true);
}

std::string TimeControl::ToPgn() const {
  if (kind == Kind::kDepth || kind == Kind::kNodes) return "-";
  if (kind == Kind::kMoveTime || bonus == Bonus::kBronstein || bonus == Bonus::kSimpleDelay)
    return "?";
  return PeriodsText(*this, /*suffix=*/false);
}

std::string TimeControl::PgnExtension() const {
  if (kind == Kind::kClock && bonus != Bonus::kBronstein && bonus != Bonus::kSimpleDelay) return "";
  return ToString();
}

Clock::Clock(const TimeControl& tc) : tc_(tc) {
  if (tc_.kind == TimeControl::Kind::kClock && !tc_.periods.empty())
    remaining_ = tc_.periods[0].time;
}

GoLimits Clock::ForGo() const {
  GoLimits g;
  if (tc_.kind != TimeControl::Kind::kClock) return g;
  g.time = std::max(remaining_, Millis(0));
  g.increment = tc_.periods[period_].increment;
  if (int m = tc_.periods[period_].moves) g.movestogo = m - moves_in_period_;
  return g;
}

Millis Clock::Allowance() const {
  switch (tc_.kind) {
    case TimeControl::Kind::kClock:
      return std::max(remaining_, Millis(0)) + (tc_.bonus == TimeControl::Bonus::kSimpleDelay
                                                    ? tc_.periods[period_].increment
                                                    : Millis(0));
    case TimeControl::Kind::kMoveTime:
      return tc_.movetime;
    default:
      return Millis(0);
  }
}

MoveVerdict Clock::Finish(Millis used, Millis margin) {
  MoveVerdict v;
  ++moves_;
  if (tc_.kind == TimeControl::Kind::kMoveTime) {
    if (used > tc_.movetime + margin) {
      v.overrun = used - tc_.movetime;
      if (++expiries_in_row_ >= std::max(1, tc_.forfeit_after))
        v.flag_fell = true;
      else
        v.expired = true;
    } else {
      expiries_in_row_ = 0;
    }
    return v;
  }
  if (tc_.kind != TimeControl::Kind::kClock) return v;
  const Millis increment = tc_.periods[period_].increment;
  Millis charged = used;
  if (tc_.bonus == TimeControl::Bonus::kSimpleDelay)
    charged = std::max(Millis(0), used - increment);
  remaining_ -= charged;
  if (remaining_ < -margin) {
    v.flag_fell = true;
    v.overrun = -remaining_;
    return v;
  }
  remaining_ = std::max(remaining_, Millis(0));  // within the margin: forgiven
  if (tc_.bonus == TimeControl::Bonus::kFischer) remaining_ += increment;
  if (tc_.bonus == TimeControl::Bonus::kBronstein) remaining_ += std::min(used, increment);
  const TcPeriod& p = tc_.periods[period_];
  if (p.moves && ++moves_in_period_ == p.moves) {
    moves_in_period_ = 0;
    if (period_ + 1 < tc_.periods.size()) ++period_;
    remaining_ += tc_.periods[period_].time;
  }
  return v;
}

void Clock::CreditOpponentTime(Millis used) {
  if (tc_.kind == TimeControl::Kind::kClock && tc_.sandclock) remaining_ += used;
}

}  // namespace arbiter::match
