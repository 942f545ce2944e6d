/**
 * `@payhook/store-dynamodb`: the DynamoDB store: exactly-once webhook handling on AWS Lambda, with
 * conditional writes and a TTL attribute.
 *
 * @module
 */
export { dynamoStore, type DynamoStore, type DynamoStoreOptions } from './dynamodb-store.js';
