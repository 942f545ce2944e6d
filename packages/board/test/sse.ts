// Reading the board's live stream (server-sent events) in a test, as the page's EventSource does.

/** An open live stream: the events it has sent so far, read as they come. */
export async function openLive(url: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const r = await fetch(url, { signal: abort.signal, headers });
  const events: Array<{ id: string; data: Record<string, unknown> }> = [];
  const waiters: Array<() => void> = [];
  if (r.ok) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        const reader = r.body!.getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          buffer += decoder.decode(chunk.value, { stream: true });
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) });
            for (const w of waiters.splice(0)) w();
          }
        }
      } catch {} // aborted
    })();
  }
  const until = async (n: number) => {
    while (events.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    return events;
  };
  return { status: r.status, type: r.headers.get('content-type'), events, until, close: () => abort.abort() };
}
