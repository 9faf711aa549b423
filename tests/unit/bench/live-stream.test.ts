import { describe, expect, it } from 'vitest';
import { liveStream } from '@/bench/browser/page';

describe('liveStream', () => {
  it('keeps each connection open, writes what it is sent when it is sent, and ends them on close', async () => {
    const stream = await liveStream('retry: 1000\n\nevent: snapshot\ndata: {}\n\n');
    const res = await fetch(stream.url);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const text = async () => new TextDecoder().decode((await reader.read()).value);
    expect(await text()).toBe('retry: 1000\n\nevent: snapshot\ndata: {}\n\n');
    expect(stream.connections).toBe(1);
    stream.send('event: delta\ndata: {}\n\n');
    expect(await text()).toBe('event: delta\ndata: {}\n\n');
    await stream.close();
    expect((await reader.read()).done).toBe(true);
  });
});
