// agree_membership (membership.hpp): the rounds' keys under "elastic/", their text records, the
// tally of a round and its one result.
#include "core/store/membership.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "core/group_text.hpp"
#include "dist/errors.hpp"

namespace dist::core {

std::vector<int> MembershipView::ranks() const {
  std::vector<int> out;
  out.reserve(members.size());
  for (const auto& m : members) out.push_back(m.rank);
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;
// After the deadline, how long the caller that ends a round may read the records counted in it.
constexpr std::chrono::milliseconds closing_read{2000};

const std::string round_key = "elastic/round";
std::string key(std::int64_t round, const std::string& what) {
  return "elastic/r" + std::to_string(round) + "/" + what;
}

std::chrono::milliseconds left(Clock::time_point deadline) {
  const auto rest = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(rest, std::chrono::milliseconds(1));
}

// ---- The records: "<rank> <restart> <lost,...|->" and, for a round's result,
// "<counted> <epoch> <rank.restart,...|-> <missing,...|->" (missing ranks: the round was ended).

struct Record {
  Incarnation who;
  std::vector<int> lost;
};

struct Result {
  std::int64_t counted = 0;  // the callers counted in before it (1..counted) are its callers
  MembershipView view;       // the agreed membership (an ended round: the one before it)
  std::vector<int> missing;  // not empty: the round was ended; these members never came
};

[[noreturn]] void corrupt(const std::string& k, const std::string& text, const char* what) {
  throw BackendError("dist::reconfigure: the store's key '" + k + "' holds '" + text + "', not " +
                     what + " (is another program using this store's elastic/ keys?)");
}

std::vector<std::string_view> split(std::string_view text, char by) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(by, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

class Parser {
 public:
  Parser(const std::string& k, std::string text, const char* what)
      : key_(k), text_(std::move(text)), what_(what), fields_(split(text_, ' ')) {}
  std::size_t fields() const { return fields_.size(); }
  std::int64_t number(std::string_view s) const {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) fail();
    return v;
  }
  std::int64_t number(std::size_t field) const { return number(fields_.at(field)); }
  std::vector<int> ranks(std::size_t field) const {
    std::vector<int> out;
    if (fields_.at(field) == "-") return out;
    for (const auto part : split(fields_.at(field), ','))
      out.push_back(static_cast<int>(number(part)));
    return out;
  }
  std::vector<Incarnation> members(std::size_t field) const {
    std::vector<Incarnation> out;
    if (fields_.at(field) == "-") return out;
    for (const auto part : split(fields_.at(field), ',')) {
      const auto pair = split(part, '.');
      if (pair.size() != 2) fail();
      out.push_back({static_cast<int>(number(pair[0])), static_cast<int>(number(pair[1]))});
    }
    return out;
  }
  [[noreturn]] void fail() const { corrupt(key_, text_, what_); }

 private:
  std::string key_, text_;
  const char* what_;
  std::vector<std::string_view> fields_;
};

std::string list(const std::vector<int>& ranks) {
  std::string out;
  for (const int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out.empty() ? "-" : out;
}

std::string encode(const Arrival& a) {
  return std::to_string(a.me.rank) + " " + std::to_string(a.me.restart) + " " + list(a.lost);
}

Record decode_record(const std::string& k, const Bytes& bytes) {
  const Parser p(k, to_string(bytes), "a caller's record");
  if (p.fields() != 3) p.fail();
  return {{static_cast<int>(p.number(0)), static_cast<int>(p.number(1))}, p.ranks(2)};
}

std::string encode(const Result& r) {
  std::string members;
  for (const auto& m : r.view.members)
    members +=
        (members.empty() ? "" : ",") + std::to_string(m.rank) + "." + std::to_string(m.restart);
  return std::to_string(r.counted) + " " + std::to_string(r.view.epoch) + " " +
         (members.empty() ? "-" : members) + " " + list(r.missing);
}

Result decode_result(const std::string& k, const Bytes& bytes) {
  const Parser p(k, to_string(bytes), "a round's result");
  if (p.fields() != 4) p.fail();
  return {p.number(0), {p.number(1), p.members(2)}, p.ranks(3)};
}

// ---- A round.

MembershipView launched(int world_size) {
  MembershipView view;
  for (int r = 0; r < world_size; ++r) view.members.push_back({r, 0});
  return view;
}

// The membership a round starts from: the result of the round before it (round 0: the world).
MembershipView membership_before(Store& store, std::int64_t round, int world_size,
                                 Clock::time_point deadline) {
  if (round == 0) return launched(world_size);
  const std::string k = key(round - 1, "result");
  return decode_result(k, store.get(k, left(deadline))).view;
}

// The records of the callers counted 1..count. With `partial`, one not written by the deadline
// is left out (its caller may have died after counting itself in).
std::vector<Record> records(Store& store, std::int64_t round, std::int64_t count,
                            Clock::time_point deadline, bool partial = false) {
  std::vector<Record> out;
  for (std::int64_t i = 1; i <= count; ++i) {
    const std::string k = key(round, "a" + std::to_string(i));
    try {
      out.push_back(decode_record(k, store.get(k, left(deadline))));
    } catch (const TimeoutError&) {
      if (!partial) throw;
    }
  }
  return out;
}

struct Tally {
  std::vector<int> missing;  // members neither lost nor come
  MembershipView next;       // the processes that came, the newest of each rank
};

Tally tally(const MembershipView& current, const std::vector<Record>& came) {
  std::map<int, int> restart_of;  // the current members' restarts
  for (const auto& m : current.members) restart_of[m.rank] = m.restart;
  std::set<int> lost;
  std::map<int, int> newest;  // rank -> the newest restart that came
  for (const auto& r : came) {
    lost.insert(r.lost.begin(), r.lost.end());
    auto [it, fresh] = newest.emplace(r.who.rank, r.who.restart);
    if (!fresh) it->second = std::max(it->second, r.who.restart);
  }
  Tally t;
  for (const auto& [rank, restart] : newest) {
    const auto member = restart_of.find(rank);
    if (member != restart_of.end() && restart > member->second) lost.insert(rank);  // replaced
    if (member == restart_of.end() || restart >= member->second)
      t.next.members.push_back({rank, restart});
  }
  for (const auto& m : current.members) {
    const auto it = newest.find(m.rank);
    const bool came_itself = it != newest.end() && it->second == m.restart;
    if (!came_itself && !lost.contains(m.rank)) t.missing.push_back(m.rank);
  }
  t.next.epoch = t.next.members == current.members ? current.epoch : current.epoch + 1;
  return t;
}

// Offers the round's result; returns the one that stands (the first offered).
Result decide(Store& store, std::int64_t round, const Result& offer) {
  const std::string k = key(round, "result");
  const std::string mine = encode(offer);
  const Bytes stood = store.compare_set(k, Bytes{}, to_bytes(mine));
  // The round after opens (from this round only: a slow caller never moves it back).
  store.compare_set(round_key, to_bytes(std::to_string(round)),
                    to_bytes(std::to_string(round + 1)));
  return decode_result(k, stood);
}

// Waits for the round's result; at the deadline ends the round (or decides it, when it turns out
// complete) unless a result came meanwhile.
Result await_result(Store& store, std::int64_t round, const MembershipView& current,
                    Clock::time_point deadline) {
  const std::string k = key(round, "result");
  try {
    return decode_result(k, store.get(k, left(deadline)));
  } catch (const TimeoutError&) {
  }
  const std::int64_t counted = store.add(key(round, "n"), 0);
  const Tally t = tally(current, records(store, round, counted, Clock::now() + closing_read, true));
  if (t.missing.empty()) return decide(store, round, {counted, t.next, {}});
  return decide(store, round, {counted, current, t.missing});
}

std::string membership_text(const MembershipView& view) {
  return "membership of epoch " + std::to_string(view.epoch) + " (" + ranks_phrase(view.ranks()) +
         ")";
}

}  // namespace

MembershipView agree_membership(Store& store, int world_size, const Arrival& arrival,
                                std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::int64_t round = store.add(round_key, 0);
  for (;;) {
    const std::int64_t me = store.add(key(round, "n"), 1);
    store.set(key(round, "a" + std::to_string(me)), encode(arrival));
    const MembershipView current = membership_before(store, round, world_size, deadline);
    // The caller that finds the round complete has the result that stands from its offer; the
    // others wait for it.
    const Tally t = tally(current, records(store, round, me, deadline));
    const Result result = t.missing.empty() ? decide(store, round, {me, t.next, {}})
                                            : await_result(store, round, current, deadline);
    if (me > result.counted) {  // counted in after the round closed: the next one
      ++round;
      continue;
    }
    if (!result.missing.empty())
      throw TimeoutError("dist::reconfigure: " + ranks_phrase(result.missing) + " of the " +
                             membership_text(current) + " did not come within " +
                             std::to_string(timeout.count()) +
                             " ms (every member that runs calls dist::reconfigure; a lost one "
                             "is left out once a caller's calls named it, or its replacement came)",
                         result.missing);
    const auto& members = result.view.members;
    if (std::find(members.begin(), members.end(), arrival.me) == members.end())
      throw Aborted("dist::reconfigure: rank " + std::to_string(arrival.me.rank) + " (restart " +
                    std::to_string(arrival.me.restart) +
                    ") was replaced by a newer process of its rank in the " +
                    membership_text(result.view));
    return result.view;
  }
}

}  // namespace dist::core
