import type { Redis } from 'ioredis';

/** Redis Cluster's key slot: CRC16-XMODEM of the hash tag (or the whole key), mod 16384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const tagged = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(tagged)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** Count the commands `redis` sends (round trips, for one-script-per-call claims); `restore()` puts the client back. */
export function countCommands(redis: Redis) {
  let sent = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<typeof send>) => {
    sent++;
    return send(...args);
  }) as typeof redis.sendCommand;
  return {
    sent: () => sent,
    reset: () => void (sent = 0),
    restore: () => void (redis.sendCommand = send),
  };
}
