export { dynamoStore, type DynamoStore, type DynamoStoreOptions } from './dynamodb-store.js';
