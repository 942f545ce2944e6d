export { durableObjectStore, type DurableObjectStoreOptions, type StoreNamespace } from './durable-object-store.js';
export { PayhookStoreObject, type StoreObjectState } from './store-object.js';
