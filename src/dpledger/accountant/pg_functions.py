"""The database side of a PostgreSQL ledger: its tables and the functions every charge goes through.

``dpledger ledger init`` creates them, owned by the role that ran it (the ledger's owner).
``dpledger_lock()`` takes the row lock that serialises writers; ``dpledger_append(document,
relation, price)`` is the only way an analyst role writes: SECURITY DEFINER (it runs with the
owner's rights, so analysts need no write privilege on any table), it records ``session_user`` as
the analyst, refuses a sealed ledger or a backup, and re-checks the budget and the analyst's quota
from the prices stated, under the filter's rule, before it appends (docs/design.md, "Who may write
a PostgreSQL ledger"). Their ``search_path`` is ``pg_catalog, pg_temp`` and they name the ledger's
tables with its schema, so no function or operator a role made in a schema it may write to (``public``
before PostgreSQL 15) ever runs with the owner's rights; ``dpledger_append`` charges only in a READ
COMMITTED transaction, whose statements see what committed while it waited for the lock. Prices and limits are exact decimals (``decimal_text``): a double's
``Fraction`` is dyadic, so its decimal expansion is finite and ``numeric`` holds it exactly.
"""

from __future__ import annotations

from fractions import Fraction

TABLES = ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
          "CREATE TABLE entries (id BIGSERIAL PRIMARY KEY, document TEXT NOT NULL, analyst TEXT NOT NULL, "
          "price NUMERIC[] NOT NULL)")

#: SQLSTATEs the functions raise, by the dpledger error a client turns each into
SEALED, MALFORMED, OVER_BUDGET, OVER_QUOTA, OTHER_RELATION = "DPL01", "DPL02", "DPL03", "DPL04", "DPL05"

#: the functions a role needs EXECUTE on to charge (``dpledger ledger grant ROLE --analyst``)
CHARGING = "dpledger_lock(), dpledger_append(text, text, text[])"

_FITS = """
CREATE FUNCTION dpledger_fits(cost numeric[], who text, block text, limits numeric[], rule text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  -- the spent total (of every analyst, or of who; of the ledger, or of the charges naming block)
  -- plus cost, against limits: each total correctly
  -- rounded to a double must be within its limit's double (the client's Filter.fits), for every
  -- limit or for some (the Renyi filter); past the largest double a total fits no limit
  WITH stored AS (
    SELECT u.i, sum(u.p) AS p FROM {schema}.entries e, unnest(e.price) WITH ORDINALITY AS u(p, i)
     WHERE (who IS NULL OR e.analyst = who) AND (block IS NULL OR (e.document::jsonb -> 'blocks') ? block)
     GROUP BY u.i),
  spent AS (
    SELECT c.i, c.p + coalesce(s.p, 0) AS total
      FROM unnest(cost) WITH ORDINALITY AS c(p, i) LEFT JOIN stored s ON s.i = c.i),
  within AS (
    SELECT CASE WHEN s.total <= l.limit_ THEN true
                WHEN s.total > 1.7976931348623157e308 THEN false
                ELSE s.total::float8 <= l.limit_::float8 END AS ok
      FROM spent s JOIN unnest(limits) WITH ORDINALITY AS l(limit_, i) ON l.i = s.i)
  SELECT CASE rule WHEN 'every' THEN bool_and(ok) ELSE bool_or(ok) END FROM within
$$"""

_LOCK = """
CREATE FUNCTION dpledger_lock() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM 1 FROM {schema}.meta WHERE key = 'schema' FOR UPDATE;  -- every writer's first statement: one at a time
END $$"""

_APPEND = """
CREATE FUNCTION dpledger_append(document text, relation text, price text[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  settings jsonb;
  entry jsonb;
  cost numeric[];
  quota jsonb;
  block text;
  appended bigint;
BEGIN
  -- a snapshot taken before the lock (REPEATABLE READ, SERIALIZABLE) would not see the charges
  -- committed while this one waited for it: the budget check below needs a fresh one
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'dpledger_append charges in a READ COMMITTED transaction only (this one is %): use '
      'Accountant.open(URL). Nothing was charged.', current_setting('transaction_isolation') USING ERRCODE = 'DPL02';
  END IF;
  PERFORM 1 FROM {schema}.meta WHERE key = 'schema' FOR UPDATE;
  SELECT jsonb_object_agg(key, value) INTO settings FROM {schema}.meta;
  IF settings ? 'sealed' OR settings ? 'backup_of' THEN
    RAISE EXCEPTION 'this ledger is sealed (or is a backup) and takes no more charges: charge a ledger that is '
      'open. Nothing was charged.' USING ERRCODE = 'DPL01';
  END IF;
  IF NOT settings ? 'limits' THEN
    RAISE EXCEPTION 'this ledger has no budget yet: its owner fixes it by opening it with a budget first. '
      'Nothing was charged.' USING ERRCODE = 'DPL01';
  END IF;
  entry := document::jsonb;
  cost := price::numeric[];
  IF jsonb_typeof(entry) <> 'object' OR relation IS NULL OR entry->>'relation' IS DISTINCT FROM relation
     OR NOT entry ?& ARRAY['name', 'mechanism', 'relation', 'guarantee', 'rule', 'params', 'steps', 'time']
     OR jsonb_typeof(entry->'guarantee'->'epsilon') IS DISTINCT FROM 'number'
     OR jsonb_typeof(entry->'guarantee'->'delta') IS DISTINCT FROM 'number'
     OR cardinality(cost) IS DISTINCT FROM jsonb_array_length((settings->>'limits')::jsonb)
     OR array_position(cost, NULL) IS NOT NULL OR 'NaN' = ANY (cost) OR NOT (0 <= ALL (cost)) THEN
    RAISE EXCEPTION 'dpledger_append takes an entry''s JSON document under its relation and its price, one '
      'non-negative number per limit of the filter: use Accountant.open(URL). Nothing was charged.'
      USING ERRCODE = 'DPL02';
  END IF;
  -- the basic filter's price is the entry's own (epsilon, delta), as doubles: checked here too
  IF (settings->>'filter')::jsonb->>'filter' = 'basic' AND entry->>'prepaid' IS NULL
     AND (cost[1] > 1e308 OR cost[1]::float8 <> (entry->'guarantee'->>'epsilon')::float8
          OR cost[2] > 1e308 OR cost[2]::float8 <> (entry->'guarantee'->>'delta')::float8) THEN
    RAISE EXCEPTION 'the price stated is not the entry''s own guarantee, which is the basic filter''s price: use '
      'Accountant.open(URL). Nothing was charged.' USING ERRCODE = 'DPL02';
  END IF;
  IF settings->>'relation' IS DISTINCT FROM relation AND settings ? 'relation' THEN
    RAISE EXCEPTION 'this ledger charges under %, not %: guarantees under different relations do not '
      'compose. Nothing was charged.', settings->>'relation', relation USING ERRCODE = 'DPL05';
  END IF;
  -- a block ledger: the entry names some of its blocks, and each block's charges must fit the budget
  -- (a record is in one block: parallel composition); a ledger-wide budget: all charges must
  IF settings ? 'blocks' AND (jsonb_typeof(entry->'blocks') IS DISTINCT FROM 'array'
     OR jsonb_array_length(entry->'blocks') = 0 OR EXISTS (
       SELECT 1 FROM jsonb_array_elements_text(entry->'blocks') AS b(name)
        WHERE NOT (settings->>'blocks')::jsonb ? b.name)) OR (NOT settings ? 'blocks' AND entry ? 'blocks') THEN
    RAISE EXCEPTION 'the entry''s blocks are not blocks of this ledger (or it has none): use Accountant.open(URL). '
      'Nothing was charged.' USING ERRCODE = 'DPL02';
  END IF;
  FOR block IN SELECT b.name FROM jsonb_array_elements_text(coalesce(entry->'blocks', '[null]')) AS b(name) LOOP
    IF NOT {schema}.dpledger_fits(cost, NULL::text, block,
                         ARRAY(SELECT jsonb_array_elements_text((settings->>'limits')::jsonb)::numeric),
                         settings->>'fits') THEN
      RAISE EXCEPTION 'the database refuses this charge: with its stated price the charges of % would exceed '
        'its budget. Nothing was charged.', coalesce('block ' || block, 'the ledger') USING ERRCODE = 'DPL03';
    END IF;
  END LOOP;
  quota := (settings->>'quotas')::jsonb -> session_user::text;
  IF quota IS NOT NULL AND NOT {schema}.dpledger_fits(
       cost, session_user::text, NULL, ARRAY(SELECT jsonb_array_elements_text(quota->'limits')::numeric), settings->>'fits') THEN
    RAISE EXCEPTION 'the database refuses this charge: with its stated price the charges of % would exceed '
      'their quota (ε %, δ %). Nothing was charged.', session_user, quota->'budget'->>'epsilon',
      quota->'budget'->>'delta' USING ERRCODE = 'DPL04';
  END IF;
  IF NOT settings ? 'relation' THEN
    INSERT INTO {schema}.meta VALUES ('relation', relation);
  END IF;
  INSERT INTO {schema}.entries (document, analyst, price) VALUES (document, session_user, cost) RETURNING id INTO appended;
  RETURN appended;
END $$"""


def statements(schema: str) -> list[str]:
    """What ``ledger init`` runs after the tables, for tables in ``schema`` (a quoted identifier):
    the functions, and no privilege for PUBLIC on any of them (PostgreSQL grants EXECUTE by default)."""
    made = [text.format(schema=schema) for text in (_FITS, _LOCK, _APPEND)]
    return made + [f"REVOKE ALL ON FUNCTION {CHARGING}, dpledger_fits(numeric[], text, text, numeric[], text) FROM PUBLIC",
                   "REVOKE ALL ON meta, entries FROM PUBLIC"]


def decimal_text(value: Fraction, up: bool) -> str:
    """``value`` as a decimal numeral for ``numeric``: exact when its denominator is a power of two
    (every double's is, and every price and limit is built from doubles), else rounded at 1100
    places, up (a price) or down (a limit), so the database never admits what the client would not."""
    denominator = value.denominator
    places = denominator.bit_length() - 1 if denominator & (denominator - 1) == 0 else 1100
    scaled, rest = divmod(value.numerator * 10 ** places, denominator)
    scaled += 1 if rest and up else 0
    sign, digits = "-" if scaled < 0 else "", str(abs(scaled)).rjust(places + 1, "0")
    return f"{sign}{digits}" if places == 0 else f"{sign}{digits[:-places]}.{digits[-places:]}"
