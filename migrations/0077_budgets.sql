-- Spend caps (src/budgets/): a budget limits the USD and/or tokens of the LLM calls of one scope
-- (every call, a bot, an API key, a user, a channel, an integration) over a period (a day or a
-- month in BUDGET_TIMEZONE, or all time). Each period has one row of its spend: what settled calls
-- spent and what calls in flight reserved (their worst case), updated under the row's lock so
-- concurrent calls in any number of processes never reserve past the limit.
CREATE TABLE IF NOT EXISTS budgets (
  id text PRIMARY KEY,
  scope text NOT NULL CHECK (scope IN ('global', 'bot', 'key', 'user', 'channel', 'integration')),
  -- '' for the global scope.
  target text NOT NULL DEFAULT '',
  period text NOT NULL CHECK (period IN ('day', 'month', 'total')),
  limit_usd double precision CHECK (limit_usd > 0),
  limit_tokens bigint CHECK (limit_tokens > 0),
  action text NOT NULL CHECK (action IN ('block', 'warn')),
  warn_at double precision NOT NULL CHECK (warn_at > 0 AND warn_at <= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (limit_usd IS NOT NULL OR limit_tokens IS NOT NULL)
);

CREATE TABLE IF NOT EXISTS budget_periods (
  budget_id text NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
  -- The period's first instant; the Unix epoch for a total budget.
  period_start timestamptz NOT NULL,
  spent_usd double precision NOT NULL DEFAULT 0,
  spent_tokens bigint NOT NULL DEFAULT 0,
  reserved_usd double precision NOT NULL DEFAULT 0,
  reserved_tokens bigint NOT NULL DEFAULT 0,
  -- Calls holding a reservation.
  in_flight int NOT NULL DEFAULT 0,
  -- When the budget_warning and budget_exceeded hook events fired this period (each fires once).
  warned_at timestamptz,
  exceeded_at timestamptz,
  PRIMARY KEY (budget_id, period_start)
);
