// diagnose_timeout and diagnose_failure: one roll call whose answers carry the ranks' calls, the
// absent ranks' published records, then the message.
#include "core/calls/diagnosis.hpp"

#include <algorithm>
#include <cstdio>

#include "core/calls/failure_dump.hpp"
#include "core/group_text.hpp"
#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
struct Answer {
  int rank = -1;
  CallRecord record;
};

bool contains(const std::vector<int>& ranks, int r) {
  return std::find(ranks.begin(), ranks.end(), r) != ranks.end();
}

// The calls of `members` that answered the roll call `key` (`absent` did not), this rank's
// included.
std::vector<Answer> answers(Store& store, const std::string& key, const GroupSite& site,
                            const std::vector<int>& members, const std::vector<int>& absent,
                            const CallRecord& mine, std::chrono::milliseconds window) {
  std::vector<Answer> out;
  for (const int r : members) {
    if (contains(absent, r)) continue;
    if (r == site.me) {
      out.push_back({r, mine});
      continue;
    }
    try {
      const auto records = decode_records(store.get(roll_call_answer_key(key, r), window));
      if (records.size() == 1) out.push_back({r, records.front()});
    } catch (const dist::Error&) {  // gone meanwhile, or unreadable: left out of the comparison
    }
  }
  return out;
}

// The records each of `ranks` last published (empty for one that never did).
std::vector<std::vector<CallRecord>> statuses(Store& store, const std::vector<int>& ranks,
                                              std::chrono::milliseconds window) {
  std::vector<std::string> keys;
  for (const int r : ranks) keys.push_back(status_key(r));
  std::vector<std::string> unpublished = keys;
  try {
    unpublished = store.missing(keys, window);
  } catch (const dist::Error&) {
  }
  std::vector<std::vector<CallRecord>> out(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (std::find(unpublished.begin(), unpublished.end(), keys[i]) != unpublished.end()) continue;
    try {
      out[i] = decode_records(store.get(keys[i], window));
    } catch (const dist::Error&) {
    }
  }
  return out;
}

// The record of call `seq` on the group of key `group` among a rank's published ones, or null.
const CallRecord* find_call(const std::vector<CallRecord>& records, const std::string& group,
                            std::uint64_t seq) {
  for (auto r = records.rbegin(); r != records.rend(); ++r)
    if (r->group_key == group && r->seq == seq) return &*r;
  return nullptr;
}

// DesyncError when the calls differ from the lowest rank's; `note` follows the calls.
void throw_if_desync(const GroupSite& site, std::uint64_t seq, std::vector<Answer> calls,
                     const std::string& note) {
  std::sort(calls.begin(), calls.end(),
            [](const Answer& a, const Answer& b) { return a.rank < b.rank; });
  for (const Answer& a : calls) {
    const auto field = differing_field(calls.front().record.call, a.record.call);
    if (field.empty()) continue;
    std::vector<RankCall> lines;
    for (const Answer& c : calls) lines.push_back({c.rank, describe(c.record.call)});
    std::string message = desync_message(site.name, seq, field, lines);
    if (!note.empty()) message += "\n  (" + note + ")";
    throw DesyncError(message);
  }
}

// An absent rank stuck in an earlier call of this group than `mine` (a call that completed here
// against another): DesyncError when its call differs from this rank's call of that number.
void throw_if_behind_and_desync(const GroupSite& site, const CallRecord& mine,
                                const std::vector<int>& absent,
                                const std::vector<std::vector<CallRecord>>& published,
                                const std::string& note) {
  const auto history = site.log->recorder.last(site.log->recorder.capacity());
  for (std::size_t i = 0; i < absent.size(); ++i) {
    const auto& theirs = published[i];
    if (theirs.empty() || theirs.back().group_key != site.key) continue;
    const CallRecord& late = theirs.back();
    if (late.seq == 0 || late.seq >= mine.seq) continue;
    const CallRecord* own = find_call(history, site.key, late.seq);
    if (own) throw_if_desync(site, late.seq, {{site.me, *own}, {absent[i], late}}, note);
  }
}

// A rank that stopped calling (or left) because the cross-check found calls that differ: the
// failure here follows from it. The store may be slow or gone; then nothing is added.
void throw_if_desync_published(CallLog& log) {
  bool published = false;
  try {
    published = log.desync_published();
  } catch (const dist::Error&) {
  }
  if (published) log.throw_desync();
}

std::string seconds_ago(std::int64_t then_us, std::int64_t now_us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(now_us - then_us) / 1e6);
  return text;
}

// What the store's host knows of an absent rank's connection: silent (open, but no request for
// longer than the publisher's rounds take: alive but cut off, or frozen), closed (it left), or
// nothing to add (talking, waiting in a request, unknown).
enum class Contact { nothing, silent, closed };
constexpr auto silent_after = std::chrono::milliseconds(1000);

Contact contact_of(const Store::RankContact& c) {
  using State = Store::RankContact::State;
  if (c.state == State::closed) return Contact::closed;
  if (c.state == State::open && c.since >= silent_after) return Contact::silent;
  return Contact::nothing;
}

std::string contact_note(Contact contact, bool one) {
  switch (contact) {
    case Contact::silent:
      return std::string(", unreachable: ") +
             (one ? "its connection to the store is" : "their connections to the store are") +
             " open but silent (cut off by a partition, or " +
             (one ? "its host is" : "their hosts are") + " down or frozen)";
    case Contact::closed:
      return std::string(", gone: ") +
             (one ? "its connection to the store" : "their connections to the store") +
             " closed (exited or crashed)";
    case Contact::nothing: break;
  }
  return "";
}

// The absent ranks' phrases, ranks whose phrases read the same joined ("ranks 4-6 never
// arrived ..."), each with its host and what the store knows of its connection.
std::string absent_text(const CallLog& log, const std::vector<int>& absent,
                        const std::vector<std::vector<CallRecord>>& records,
                        const std::vector<Store::RankContact>& contacts, const std::string& group,
                        std::uint64_t current_seq) {
  struct Phrase {
    std::string text;  // for one rank, without its "rank N"
    std::vector<int> ranks;
    std::size_t first = 0;
  };
  std::vector<Phrase> phrases;
  const std::int64_t now = wall_clock_us();
  const auto phrase = [&](const std::vector<int>& ranks, std::size_t i) {
    const Contact contact = contact_of(contacts[i]);
    return describe_absent(ranks, records[i], group, now, current_seq, log.host_suffix(absent[i])) +
           contact_note(contact, ranks.size() == 1);
  };
  for (std::size_t i = 0; i < absent.size(); ++i) {
    const std::string text = phrase({absent[i]}, i);
    const std::string body = text.substr(text.find(' ', 5));
    auto it = std::find_if(phrases.begin(), phrases.end(),
                           [&](const Phrase& p) { return p.text == body; });
    if (it == phrases.end()) phrases.push_back({body, {absent[i]}, i});
    else it->ranks.push_back(absent[i]);
  }
  std::string out;
  for (const Phrase& p : phrases) out += (out.empty() ? "" : "; ") + phrase(p.ranks, p.first);
  return out;
}

// The store's host that did not answer the roll call, by what a fresh connection to it found.
std::string store_host_text(const CallLog& log, Store::HostReach reach) {
  const int host = log.store->host_rank();
  const std::string who = "the store's host, rank " + std::to_string(host) + log.host_suffix(host);
  switch (reach) {
    case Store::HostReach::silent:
      return who + ", is unreachable: its host does not answer at the network level (cut off " +
             "from this host by a partition, or down)";
    case Store::HostReach::refused:
      return who + ", has exited (its host refuses connections to the store's port)";
    case Store::HostReach::accepting:
    case Store::HostReach::unknown: break;
  }
  return who + ", is unresponsive (is that process stopped or hung?)";
}

std::string roll_key(const GroupSite& site, std::uint64_t seq) {
  return "calls/" + site.key + "/" + std::to_string(seq);
}
}  // namespace

std::string describe_absent(const std::vector<int>& ranks, const std::vector<CallRecord>& records,
                            const std::string& group, std::int64_t now_us,
                            std::uint64_t current_seq, const std::string& where) {
  const bool one = ranks.size() == 1;
  const std::string who = ranks_phrase(ranks) + where;
  if (records.empty())
    return who + " never arrived (" + (one ? "it has" : "they have") + " published no call)";
  // The newest call: named by number when it is on this group, in full when elsewhere.
  const CallRecord& r = records.back();
  const std::string call = r.group_key == group && r.seq > 0
                               ? "call #" + std::to_string(r.seq) + " (" + describe(r.call) + ")"
                               : describe(r);
  const std::string is = one ? " is in " : " are in ";
  // Calls of this group after the record's completed here, and needed these ranks: what they
  // published is old news (their status stopped reaching the store), so say only that.
  const bool stale =
      r.group_key == group && r.seq > 0 && current_seq > 0 &&
      (r.state == CallState::completed ? r.seq + 1 < current_seq : r.seq < current_seq);
  if (stale)
    return who + (one ? " was" : " were") + " last heard of in " + call + ", " +
           seconds_ago(r.state == CallState::completed ? r.ended_us : r.posted_us, now_us) +
           " ago (calls up to #" + std::to_string(current_seq - 1) + " completed with " +
           (one ? "it" : "them") + " since: " + (one ? "its" : "their") +
           " status stopped reaching the store)";
  switch (r.state) {
    case CallState::posted: return who + is + call + " since " + seconds_ago(r.posted_us, now_us);
    case CallState::failed: return who + is + call + ", which failed there too";
    case CallState::completed: break;
  }
  return who + " completed " + call + " " + seconds_ago(r.ended_us, now_us) + " ago and " +
         (one ? "has" : "have") + " not called since";
}

void diagnose_timeout(const GroupSite& site, const CallRecord& mine, const std::string& detail) {
  CallLog& log = *site.log;
  const std::string timed_out =
      describe(mine) + " timed out after " + std::to_string(site.timeout().count()) + " ms";
  if (!log.store) throw TimeoutError(timed_out + ": " + detail, {});
  log.publish();
  const auto window = roll_call_window(site.timeout());
  share_recorder(site, window);
  const std::string key = roll_key(site, mine.seq);
  const RollCall roll =
      roll_call(*log.store, key, site.world_ranks, site.me, window, encode_records({mine}));
  auto calls = answers(*log.store, key, site, site.world_ranks, roll.absent, mine, window);
  std::vector<int> waiting;
  for (const Answer& a : calls) waiting.push_back(a.rank);
  std::sort(waiting.begin(), waiting.end());
  const auto published = statuses(*log.store, roll.absent, window);
  write_failure_dump(site, waiting, roll.absent, published, window);
  for (std::size_t i = 0; i < roll.absent.size(); ++i)  // an absent rank's own record of the call
    if (const CallRecord* r = find_call(published[i], site.key, mine.seq))
      calls.push_back({roll.absent[i], *r});
  std::vector<Store::RankContact> contacts(roll.absent.size());
  try {
    if (!roll.absent.empty()) contacts = log.store->contacts(roll.absent, window);
  } catch (const dist::Error&) {  // the store is gone or slow: its knowledge is not added
  }
  const std::string absent =
      roll.absent.empty() ? ""
                          : absent_text(log, roll.absent, published, contacts, site.key, mine.seq);
  throw_if_desync(site, mine.seq, std::move(calls), absent);
  throw_if_behind_and_desync(site, mine, roll.absent, published, absent);
  throw_if_desync_published(log);
  std::string why = roll.absent.empty()
                        ? "every member reached it with the same call (is a device or a peer's "
                          "progress stuck?)"
                        : absent + "; " + ranks_phrase(waiting) +
                              (waiting.size() == 1 ? " waits" : " wait") + " in call #" +
                              std::to_string(mine.seq) + " (" + describe(mine.call) + ")";
  if (roll.host_unresponsive) why = store_host_text(log, roll.host_reach);
  throw TimeoutError(timed_out + ": " + why + "\n  (" + detail + ")", roll.absent);
}

void diagnose_failure(const GroupSite& site, const CallRecord& mine, int failed) {
  CallLog& log = *site.log;
  if (!log.store || !contains(site.world_ranks, failed) || failed == site.me) return;
  // The store went with its host: what this rank's cross-check learned before is all there is.
  const auto learned_before = [&log] {
    if (log.desync_found()) log.throw_desync();
  };
  if (failed == log.store->host_rank()) return learned_before();
  log.publish();
  // Survivors learn of a loss within moments of each other: a short window keeps a cascade of
  // losses from adding a full window each.
  const auto window = std::min(roll_call_window(site.timeout()), std::chrono::milliseconds(500));
  share_recorder(site, window);
  std::vector<int> survivors;
  for (const int r : site.world_ranks)
    if (r != failed) survivors.push_back(r);
  const std::string key = roll_key(site, mine.seq);
  const RollCall roll =
      roll_call(*log.store, key, survivors, site.me, window, encode_records({mine}));
  if (!roll.complete) return learned_before();
  auto calls = answers(*log.store, key, site, survivors, roll.absent, mine, window);
  // The lost rank and the survivors that did not answer (gone too, or elsewhere): their calls
  // of this number, or the earlier ones they stopped in, as they last published them.
  std::vector<int> gone = roll.absent;
  gone.push_back(failed);
  const auto published = statuses(*log.store, gone, window);
  std::vector<int> present;
  for (const Answer& a : calls) present.push_back(a.rank);
  std::sort(present.begin(), present.end());
  write_failure_dump(site, present, gone, published, window);
  for (std::size_t i = 0; i < gone.size(); ++i)
    if (const CallRecord* r = find_call(published[i], site.key, mine.seq))
      calls.push_back({gone[i], *r});
  throw_if_desync(site, mine.seq, std::move(calls), "");
  throw_if_behind_and_desync(site, mine, gone, published, "");
  throw_if_desync_published(log);
}

}  // namespace dist::core
