//! The audit log (R-CAP-6): append-only records of every call and decision, chained by SHA-256
//! so that an edited or removed record is found by [`AuditLog::verify`]. The canonical form of a
//! digest is documented on [`AuditRecord`].

use std::io::Write;

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::db::now_rfc3339;
use crate::{Sha256Hex, Store, StoreError};

/// What the caller records about one call or decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// The conversation (agent session).
    pub conversation_id: String,
    /// The agent's `call_id`.
    pub call_id: String,
    /// The vouched agent identity, if the session has one (R-SES-1).
    pub agent: Option<String>,
    /// The capability's name.
    pub capability: String,
    /// The capability's version.
    pub version: String,
    /// Its risk: `display_only`, `user_confirmation`, `system_permission`, `restricted` (R-CAP-2).
    pub risk: String,
    /// The SHA-256 of the arguments, as in the call record.
    pub args_digest: Sha256Hex,
    /// The decision, like `allowed`, `denied`, `not_asked`.
    pub decision: String,
    /// Where the decision came from, like `prompt`, `grant`, `policy`, `hook`.
    pub decision_source: String,
    /// The `app.result` status the call ended with.
    pub status: String,
    /// Why (format 2): what the record is about, the refusal's code and field, a host note,
    /// and how many identical records it stands for. Empty in format-1 records.
    #[serde(flatten)]
    pub detail: AuditDetail,
}

/// The reason of an audit record (format 2, R-CAP-6); every part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditDetail {
    /// What the record is about, like `received`, `decision`, `answered`, `refused`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The error code of a refusal or failure, like `invalid_arguments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The field a refusal names, like `payload.arguments/url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// A short host-written note (never the refused payload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How many identical records this one stands for, when more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// The record format new records are written in; format-1 records (no `format` key, no
/// reason) keep verifying with their own canonical form.
pub const AUDIT_FORMAT: u8 = 2;

/// A stored audit record: the entry, its place in the chain and its digest. Exported as one JSON
/// line with the keys of the canonical form, then `digest`: that line without its `digest` key
/// is the canonical form.
///
/// # Canonical form
///
/// A record's `digest` is the SHA-256, as 64 lowercase hex digits, of the UTF-8 bytes of this
/// JSON text, with the keys in exactly this order, no whitespace, `seq` as a decimal integer,
/// `agent` as `null` when there is none, and every other value a string:
///
/// ```text
/// {"seq":1,"time":"…","conversation_id":"…","call_id":"…","agent":"…","capability":"…",
///  "version":"…","risk":"…","args_digest":"…","decision":"…","decision_source":"…",
///  "status":"…","prev":"…"}
/// ```
///
/// (one line; broken here for reading). That is format 1, the form of records written before
/// the reason was kept. Format 2 ([`AUDIT_FORMAT`], every new record) adds `"format":2` right
/// after `seq`, and `kind`, `code`, `field`, `note` (strings or `null`) and `count` (an integer
/// or `null`) after `status`, before `prev`. Strings are quoted with `"`; `"` and `\` are written
/// `\"` and `\\`; U+0008, U+0009, U+000A, U+000C, U+000D as `\b`, `\t`, `\n`, `\f`, `\r`; the
/// other characters below U+0020 as `\u00XX` with lowercase hex; every other character as itself,
/// unescaped (`/`, U+007F and non-ASCII included). This is what `serde_json::to_string`,
/// JavaScript's `JSON.stringify` and Python's `json.dumps(…, ensure_ascii=False,
/// separators=(",", ":"))` write, so a gateway rebuilds it from an exported line by writing these
/// thirteen keys in this order.
///
/// `prev` is the `digest` of the record before; the first record's `prev` is 64 zeros.
///
/// # What the chain proves
///
/// Verification finds a record whose content was edited (its digest no longer matches), a record
/// removed from the middle (a gap in `seq`), and a record whose `prev` does not match. It cannot
/// find the last records cut off, nor the whole log rewritten with fresh digests: only a head
/// digest kept elsewhere (printed by `lineup audit verify`, or forwarded to a gateway) shows
/// those.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Its sequence number: 1, 2, 3, … without gaps.
    pub seq: u64,
    /// Its format: 1 (no reason) or 2 ([`AUDIT_FORMAT`]: with [`AuditDetail`]).
    #[serde(default = "format_1", skip_serializing_if = "is_format_1")]
    pub format: u8,
    /// When it was appended (RFC 3339, UTC).
    pub time: String,
    /// What was recorded.
    #[serde(flatten)]
    pub entry: AuditEntry,
    /// The digest of the record before (64 zeros for the first).
    pub prev: Sha256Hex,
    /// The SHA-256 of [`AuditRecord::canonical`].
    pub digest: Sha256Hex,
}

impl AuditRecord {
    /// The canonical form this record's digest is computed over (see the module docs).
    pub fn canonical(&self) -> String {
        let e = &self.entry;
        let mut out = String::with_capacity(512);
        out.push_str("{\"seq\":");
        out.push_str(&self.seq.to_string());
        if self.format >= 2 {
            out.push_str(",\"format\":");
            out.push_str(&self.format.to_string());
        }
        let fields: [(&str, Option<&str>); 11] = [
            ("time", Some(&self.time)),
            ("conversation_id", Some(&e.conversation_id)),
            ("call_id", Some(&e.call_id)),
            ("agent", e.agent.as_deref()),
            ("capability", Some(&e.capability)),
            ("version", Some(&e.version)),
            ("risk", Some(&e.risk)),
            ("args_digest", Some(e.args_digest.as_str())),
            ("decision", Some(&e.decision)),
            ("decision_source", Some(&e.decision_source)),
            ("status", Some(&e.status)),
        ];
        let push = |out: &mut String, key: &str, value: Option<&str>| {
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":");
            match value {
                Some(text) => push_json_string(out, text),
                None => out.push_str("null"),
            }
        };
        for (key, value) in fields {
            push(&mut out, key, value);
        }
        if self.format >= 2 {
            let d = &e.detail;
            push(&mut out, "kind", d.kind.as_deref());
            push(&mut out, "code", d.code.as_deref());
            push(&mut out, "field", d.field.as_deref());
            push(&mut out, "note", d.note.as_deref());
            out.push_str(",\"count\":");
            match d.count {
                Some(n) => out.push_str(&n.to_string()),
                None => out.push_str("null"),
            }
        }
        push(&mut out, "prev", Some(self.prev.as_str()));
        out.push('}');
        out
    }

    /// The exported line: the canonical form with `digest` last.
    pub fn line(&self) -> String {
        let mut line = self.canonical();
        line.pop();
        line.push_str(",\"digest\":");
        push_json_string(&mut line, self.digest.as_str());
        line.push('}');
        line
    }

    /// The digest this record should have: the SHA-256 of its canonical form.
    pub fn compute_digest(&self) -> Sha256Hex {
        Sha256Hex::of(self.canonical().as_bytes())
    }
}

fn format_1() -> u8 {
    1
}

fn is_format_1(format: &u8) -> bool {
    *format == 1
}

/// Writes `text` as a JSON string, escaped as the canonical form says.
fn push_json_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{0c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => {
                let byte = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[byte >> 4]));
                out.push(char::from(HEX[byte & 0x0f]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The end of a verified chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditHead {
    /// How many records were verified.
    pub count: u64,
    /// The digest of the last record (64 zeros when the log is empty). Keep it elsewhere: a
    /// later verification whose chain does not pass through it shows a cut or rewritten log.
    pub head: Sha256Hex,
}

/// Checks a chain record by record, in order: for [`AuditLog::verify`], and for a gateway
/// verifying an export.
#[derive(Debug, Clone)]
pub struct ChainVerifier {
    next_seq: u64,
    prev: Sha256Hex,
}

impl Default for ChainVerifier {
    fn default() -> Self {
        Self::new()
    }
}

impl ChainVerifier {
    /// A verifier expecting record 1.
    pub fn new() -> Self {
        Self {
            next_seq: 1,
            prev: Sha256Hex::zero(),
        }
    }

    /// Checks the next record: its `seq` follows without a gap, its `prev` is the digest of the
    /// record before, and its `digest` matches its content.
    ///
    /// # Errors
    ///
    /// [`StoreError::AuditRecordMissing`], [`StoreError::AuditLinkBroken`],
    /// [`StoreError::AuditRecordAltered`], naming the first bad sequence number.
    pub fn push(&mut self, record: &AuditRecord) -> Result<(), StoreError> {
        if record.seq != self.next_seq {
            return Err(StoreError::AuditRecordMissing {
                seq: self.next_seq,
                found: record.seq,
            });
        }
        if record.prev != self.prev {
            return Err(StoreError::AuditLinkBroken { seq: record.seq });
        }
        if record.compute_digest() != record.digest {
            return Err(StoreError::AuditRecordAltered { seq: record.seq });
        }
        self.next_seq += 1;
        self.prev = record.digest.clone();
        Ok(())
    }

    /// The count and head digest of what was pushed.
    pub fn finish(self) -> AuditHead {
        AuditHead {
            count: self.next_seq - 1,
            head: self.prev,
        }
    }
}

const COLUMNS: &str = "seq, time, conversation_id, call_id, agent, capability, version, risk, \
                       args_digest, decision, decision_source, status, prev, digest, \
                       format, kind, code, field, note, count";

/// The audit log of a [`Store`] ([`Store::audit`]), in table `audit` (R-CAP-6).
///
/// Invariants: records are only appended, never changed or removed; their `seq` runs 1, 2, 3,
/// … without gaps, each record's `prev` is the digest of the one before (64 zeros for the
/// first) and its `digest` is that of its canonical form ([`AuditRecord`]). Each append reads
/// the last record and writes the next inside one `BEGIN IMMEDIATE` transaction, so hosts
/// sharing the data directory never fork the chain.
#[derive(Debug, Clone, Copy)]
pub struct AuditLog<'s> {
    store: &'s Store,
}

impl<'s> AuditLog<'s> {
    /// The audit log of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Appends a record, chained to the last one, in one `BEGIN IMMEDIATE` transaction (so
    /// hosts sharing the data directory never fork the chain); committed before it returns.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`] when the last record's digest is not hex.
    pub fn append(&self, entry: &AuditEntry) -> Result<AuditRecord, StoreError> {
        let tx = self.store.write("begin audit append")?;
        let record = self.append_in(&tx, entry)?;
        tx.commit()
            .map_err(self.store.sqlite("commit audit append"))?;
        Ok(record)
    }

    /// [`AuditLog::append`] inside the caller's write transaction `tx`, so that a change and
    /// its record commit together.
    pub(crate) fn append_in(
        &self,
        tx: &rusqlite::Transaction<'_>,
        entry: &AuditEntry,
    ) -> Result<AuditRecord, StoreError> {
        let last: Option<(i64, String)> = tx
            .query_row(
                "SELECT seq, digest FROM audit ORDER BY seq DESC LIMIT 1",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(self.store.sqlite("select from audit"))?;
        let (seq, prev) = match last {
            None => (1, Sha256Hex::zero()),
            Some((seq, digest)) => {
                let prev = Sha256Hex::try_from(digest).map_err(|e| StoreError::Corrupt {
                    table: "audit",
                    key: seq.to_string(),
                    detail: e.to_string(),
                })?;
                (seq.unsigned_abs() + 1, prev)
            }
        };
        let mut record = AuditRecord {
            seq,
            format: AUDIT_FORMAT,
            time: now_rfc3339(),
            entry: entry.clone(),
            prev,
            digest: Sha256Hex::zero(),
        };
        record.digest = record.compute_digest();
        let e = &record.entry;
        tx.execute(
            &format!(
                "INSERT INTO audit ({COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
                         ?15, ?16, ?17, ?18, ?19, ?20)"
            ),
            params![
                i64::try_from(record.seq).unwrap_or(i64::MAX),
                record.time,
                e.conversation_id,
                e.call_id,
                e.agent,
                e.capability,
                e.version,
                e.risk,
                e.args_digest.as_str(),
                e.decision,
                e.decision_source,
                e.status,
                record.prev.as_str(),
                record.digest.as_str(),
                record.format,
                e.detail.kind,
                e.detail.code,
                e.detail.field,
                e.detail.note,
                e.detail.count.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
            ],
        )
        .map_err(self.store.sqlite("insert into audit"))?;
        Ok(record)
    }

    /// Walks the whole chain from record 1 (in one read snapshot, while other hosts may append)
    /// and returns the count and head digest.
    ///
    /// # Errors
    ///
    /// [`StoreError::AuditRecordMissing`], [`StoreError::AuditLinkBroken`],
    /// [`StoreError::AuditRecordAltered`] naming the first bad sequence number;
    /// [`StoreError::Sqlite`].
    pub fn verify(&self) -> Result<AuditHead, StoreError> {
        let mut verifier = ChainVerifier::new();
        self.each_record(|record| verifier.push(&record))?;
        Ok(verifier.finish())
    }

    /// The sequence number of the record whose digest is `digest`, if any. After
    /// [`AuditLog::verify`] passed, a head digest kept from an earlier verification that is
    /// still found here proves that nothing up to it was cut or rewritten since.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn seq_of(&self, digest: &Sha256Hex) -> Result<Option<u64>, StoreError> {
        self.store
            .conn()
            .query_row(
                "SELECT seq FROM audit WHERE digest = ?1 ORDER BY seq LIMIT 1",
                [digest.as_str()],
                |row| row.get::<_, i64>(0),
            )
            .optional()
            .map(|seq| seq.map(i64::unsigned_abs))
            .map_err(self.store.sqlite("select from audit"))
    }

    /// Writes every record, in order, as one JSON line each; returns how many. It does not
    /// verify: run [`AuditLog::verify`] or a [`ChainVerifier`] on the lines.
    ///
    /// # Errors
    ///
    /// [`StoreError::Export`] when writing fails, [`StoreError::Sqlite`],
    /// [`StoreError::AuditRecordAltered`] for a record that cannot be read as one.
    pub fn export(&self, mut out: impl Write) -> Result<u64, StoreError> {
        let mut count = 0;
        self.each_record(|record| {
            out.write_all(record.line().as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .map_err(StoreError::Export)?;
            count += 1;
            Ok(())
        })?;
        out.flush().map_err(StoreError::Export)?;
        Ok(count)
    }

    /// Every record, in `seq` order, read in one statement (one snapshot).
    fn each_record(
        &self,
        mut each: impl FnMut(AuditRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut statement = self
            .store
            .conn()
            .prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY seq"))
            .map_err(self.store.sqlite("select from audit"))?;
        let mut rows = statement
            .query([])
            .map_err(self.store.sqlite("select from audit"))?;
        while let Some(row) = rows.next().map_err(self.store.sqlite("read audit"))? {
            each(record_from_row(row).map_err(self.store.sqlite("read audit"))??)?;
        }
        Ok(())
    }
}

/// A row as a record; a `prev` or `digest` that is not a digest means an edited record.
fn record_from_row(row: &Row<'_>) -> rusqlite::Result<Result<AuditRecord, StoreError>> {
    let seq: i64 = row.get(0)?;
    let seq = seq.unsigned_abs();
    let digest = |index| -> rusqlite::Result<Result<Sha256Hex, StoreError>> {
        let text: String = row.get(index)?;
        Ok(Sha256Hex::try_from(text).map_err(|_| StoreError::AuditRecordAltered { seq }))
    };
    let args_digest = match digest(8)? {
        Ok(d) => d,
        Err(e) => return Ok(Err(e)),
    };
    let prev = match digest(12)? {
        Ok(d) => d,
        Err(e) => return Ok(Err(e)),
    };
    let own = match digest(13)? {
        Ok(d) => d,
        Err(e) => return Ok(Err(e)),
    };
    let count: Option<i64> = row.get(19)?;
    Ok(Ok(AuditRecord {
        seq,
        format: row.get(14)?,
        time: row.get(1)?,
        entry: AuditEntry {
            conversation_id: row.get(2)?,
            call_id: row.get(3)?,
            agent: row.get(4)?,
            capability: row.get(5)?,
            version: row.get(6)?,
            risk: row.get(7)?,
            args_digest,
            decision: row.get(9)?,
            decision_source: row.get(10)?,
            status: row.get(11)?,
            detail: AuditDetail {
                kind: row.get(15)?,
                code: row.get(16)?,
                field: row.get(17)?,
                note: row.get(18)?,
                count: count.map(i64::unsigned_abs),
            },
        },
        prev,
        digest: own,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> AuditRecord {
        AuditRecord {
            seq: 7,
            format: 1,
            time: "2025-01-31T12:00:00Z".into(),
            entry: AuditEntry {
                agent: None,
                ..crate::tests::entry("c1", "k1")
            },
            prev: Sha256Hex::zero(),
            digest: Sha256Hex::zero(),
        }
    }

    #[test]
    fn canonical_form_is_the_documented_one() {
        let r = record();
        let expected = format!(
            "{{\"seq\":7,\"time\":\"2025-01-31T12:00:00Z\",\"conversation_id\":\"c1\",\
             \"call_id\":\"k1\",\"agent\":null,\"capability\":\"clipboard.write\",\
             \"version\":\"1\",\"risk\":\"user_confirmation\",\"args_digest\":\"{}\",\
             \"decision\":\"allowed\",\"decision_source\":\"prompt\",\"status\":\"completed\",\
             \"prev\":\"{}\"}}",
            Sha256Hex::of(b"{}"),
            "0".repeat(64)
        );
        assert_eq!(r.canonical(), expected);
        // Golden: a change to the canonical form breaks every stored chain.
        assert_eq!(
            r.compute_digest().as_str(),
            Sha256Hex::of(expected.as_bytes()).as_str()
        );
    }

    #[test]
    fn canonical_strings_are_escaped_as_serde_json_writes_them() {
        let tricky = "q\"b\\s/ \u{0} \u{8}\t\n\u{b}\u{c}\r\u{1f} \u{7f} é \u{202e} 😀";
        let mut ours = String::new();
        push_json_string(&mut ours, tricky);
        assert_eq!(ours, serde_json::to_string(tricky).unwrap());
        assert!(
            ours.contains("\\u000b") && ours.contains("\\u001f"),
            "{ours}"
        );
    }

    #[test]
    fn canonical_form_is_what_the_exported_line_holds_minus_the_digest() {
        // A gateway rebuilds the canonical form by dropping `digest` from the exported object.
        for format in [1, AUDIT_FORMAT] {
            let mut r = record();
            r.format = format;
            r.entry.detail.code = Some("invalid_arguments".into());
            let line = r.line();
            let without_digest = line.replace(&format!(",\"digest\":\"{}\"", r.digest), "");
            assert_eq!(without_digest, r.canonical());
            // What a gateway parses back is the same record (format 1 carries no reason).
            let back: AuditRecord = serde_json::from_str(&line).unwrap();
            assert_eq!(back.canonical(), r.canonical());
        }
    }

    #[test]
    fn format_2_canonical_form_carries_the_reason_with_nulls() {
        let mut r = record();
        r.format = AUDIT_FORMAT;
        r.entry.detail.kind = Some("answered".into());
        r.entry.detail.code = Some("invalid_arguments".into());
        r.entry.detail.field = Some("payload.arguments/url".into());
        let canonical = r.canonical();
        assert!(
            canonical.starts_with("{\"seq\":7,\"format\":2,\"time\""),
            "{canonical}"
        );
        assert!(
            canonical.contains(
                "\"status\":\"completed\",\"kind\":\"answered\",\"code\":\"invalid_arguments\",\"field\":\"payload.arguments/url\",\"note\":null,\"count\":null,\"prev\""
            ),
            "{canonical}"
        );
        // Format 1 of the same entry leaves the reason out, as records written before did.
        r.format = 1;
        assert!(!r.canonical().contains("code"), "{}", r.canonical());
    }
}
