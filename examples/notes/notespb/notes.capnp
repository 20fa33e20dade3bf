# The session interface of the notes example blueprint: private notes for
# every user of one gadget, with paging and search.
#
# Notes belong to users, not to the gadget: a session is bound to the user who
# opened it (Caller.userId), and it can only ever see that user's notes. Two
# sessions of the same user (two browser tabs, a CLI and a tab) see the same
# notes; two different users of the same shared gadget never see each other's,
# and naming another user's note id gives the same "no note" error as an id
# that never existed.
#
# A viewer (Caller.role) may read their notes but not add, change or remove
# them; those calls fail with "permission denied".
#
# Errors are ordinary Cap'n Proto exceptions whose reason starts with "notes:"
# and names what was wrong ("notes: title is empty", "notes: no note 7",
# "notes: storage limit reached, nothing was saved: ...").

@0x99eb079465970390;

using Go = import "/go.capnp";
$Go.package("notespb");
$Go.import("github.com/gadgetd/gadgetd/examples/notes/notespb");

struct Note {
  id @0 :UInt32;
  # Unique among the notes of one user and never reused, even after the note
  # is removed. Ids grow with every note a user adds, so a larger id is a
  # newer note. (32 bits keep ids exact in JavaScript; a user would have to
  # add a note per second for 136 years to run out, and `add` fails with an
  # error if one ever does.)

  title @1 :Text;
  # 1 to 200 bytes of UTF-8, not only white space.

  body @2 :Text;
  # Up to 65,536 bytes of UTF-8; may be empty.

  createdAt @3 :Int64;
  # When the note was added, in milliseconds since the Unix epoch.

  updatedAt @4 :Int64;
  # When the note was last changed (equal to createdAt until then).
}

struct Person {
  # Someone with this gadget open now (`Notes.present`).

  userId @0 :Text;
  # As this gadget knows them (Caller.userId): the pseudonym their own
  # sessions see.

  userName @1 :Text;
  # For display only.

  role @2 :Role;
  # Their highest role among their open sessions.
}

enum Role {
  # The platform's roles (Caller.role), least to most power.
  viewer @0;
  editor @1;
  owner @2;
}

interface Notes {
  # One user's notes. Every method reads or changes only the notes of the
  # user the session was opened for, and each call is one storage
  # transaction: it happens entirely or not at all.

  add @0 (title :Text, body :Text) -> (note :Note);
  # Adds a note and returns it with its new id. Fails when the title is empty
  # or longer than 200 bytes, when the body is longer than 64 KiB, when the
  # text is not UTF-8, when the user already has `Info.maxNotes` notes, or
  # when the gadget's storage is full (the error then carries the host's
  # message, which names the limit). A failed add changes nothing.

  get @1 (id :UInt32) -> (note :Note);
  # One note. Fails with "notes: no note <id>" if this user has no such note.

  update @2 (id :UInt32, title :Text, body :Text) -> (note :Note);
  # Replaces a note's title and body (validated as in add) and returns the
  # new version. The id and createdAt stay the same.

  remove @3 (id :UInt32);
  # Removes a note for good. Fails with "notes: no note <id>" if this user
  # has no such note, so a client can tell a typo from success.

  list @4 (limit :UInt32, after :UInt32) -> (notes :List(Note), next :UInt32);
  # Notes newest first (by descending id). `after` = 0 starts at the newest
  # note; otherwise the page starts with the newest note older than `after`.
  # At most `limit` notes (0 means 50; at most 200), and fewer when the page
  # would exceed 4 MiB of text, so a page always fits in one message. `next`
  # is the `after` for the following page, or 0 when there are no more notes.
  # Cost: reads only the notes it returns plus one.

  search @5 (query :Text, limit :UInt32, after :UInt32) -> (notes :List(Note), next :UInt32);
  # Notes whose title or body contains `query`, ignoring case (both sides
  # are lower-cased with Unicode's default mapping), newest first. `limit`,
  # `after` and `next` page exactly as in list. The query must be 1 to 200
  # bytes of UTF-8, not only white space.
  #
  # Cost: there is no index. A search reads the user's notes one by one,
  # newest first, until it has found `limit` matches and one more (to know
  # whether there is a next page) or has run out of notes. So a rare word
  # costs a read of every note this user has: time and storage reads
  # proportional to the total size of their notes (at most maxNotes x 64 KiB,
  # and never more than the gadget's storage); notes are read 32 at a time,
  # so 10,000 notes take about 300 storage reads. Fine for notes; a
  # blueprint with much more text per user should keep an index.

  stats @6 () -> (count :UInt32, bytes :UInt64);
  # How many notes this user has and how many bytes of the gadget's storage
  # they take (keys plus stored values: what counts against the storage
  # limit). Kept up to date by every change, so this costs one read.

  info @7 () -> (userName :Text, canWrite :Bool, maxNotes :UInt32, maxTitleBytes :UInt32, maxBodyBytes :UInt32, permissions :List(Text));
  # Who this session belongs to and what it may do: `canWrite` is whether
  # the caller holds the "edit" permission (blueprint.json gives it to
  # editors; owners hold every permission), and `permissions` is every one
  # of the blueprint's permissions the caller holds, as the platform says
  # now (`SessionContext.caller`). The limits are the ones add and update
  # enforce.

  present @8 () -> (people :List(Person));
  # Who has this gadget open now, this session's user included, one entry
  # per user, in the order they arrived, as the platform says
  # (`SessionContext.present`). It reveals no one's notes.
}
