import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll } from 'vitest';

/**
 * dynalite for one test file: DynamoDB's API on an in-memory LevelDB, a real HTTP server on
 * loopback, with `tables` (each a name and its partition key, a String) made before the file's
 * tests and the server closed after them. `client()` makes a new client of it; `admin` is one the
 * file shares.
 */
export async function startDynalite(tables: readonly (readonly [name: string, key: string])[]) {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = () =>
    new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const admin = client();
  beforeAll(async () => {
    for (const [name, key] of tables) {
      await admin.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }],
          KeySchema: [{ AttributeName: key, KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    }
  });
  afterAll(async () => {
    admin.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { client, admin };
}
