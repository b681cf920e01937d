export {
  type ContractOptions,
  describeChunkStoreContract,
  textChunk,
} from './chunk-store-contract';
export { loadDeepTab } from './load-deep-tab';
