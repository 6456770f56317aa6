// A connection or name the fence refused: what the leg's log, its events and the report say of it.

/** One refusal: the host (or address) asked for, its port (null: a name lookup), and how it was refused. */
export interface Refusal {
  host: string;
  port: number | null;
  /** `proxy` (svc's proxy said no), `dns` (svc's resolver said no), `kernel` (the packet was rejected), with why. */
  how: string;
  /** How many times (the same host, port and how count once in the log). */
  count: number;
}

/** Text from a leg (a host it asked for) with controls made visible, for a log line or a report. */
export function visibleHost(text: string): string {
  // Backslashes stay as they are: a report shows an already visible host again, unchanged.
  const out = text.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return out.length > 200 ? `${out.slice(0, 197)}...` : out;
}

/** The one line a refusal is in the leg's log (and, with --send-logs, an event's body). */
export function refusalLine(r: Pick<Refusal, 'host' | 'port' | 'how'>): string {
  const host = visibleHost(r.host);
  const where = r.port === null ? host : `${host.includes(':') ? `[${host}]` : host}:${r.port}`;
  return `network: refused ${where} (${r.how})`;
}

/** Refusals of one leg, each once, with how many times it happened. */
export class RefusalBook {
  readonly #seen = new Map<string, Refusal>();

  constructor(private readonly onFirst: (r: Refusal) => void) {}

  add(r: Omit<Refusal, 'count'>): void {
    const key = `${r.host}\0${r.port}\0${r.how}`;
    const had = this.#seen.get(key);
    if (had) {
      had.count++;
      return;
    }
    const entry = { ...r, count: 1 };
    this.#seen.set(key, entry);
    this.onFirst(entry);
  }

  list(): Refusal[] {
    return [...this.#seen.values()].map((r) => ({ ...r }));
  }
}
