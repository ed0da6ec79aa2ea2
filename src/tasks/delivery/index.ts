/**
 * What integrations (through the SDK) use of result dispatch: the registry service, the contract
 * types, and the check `register` applies.
 */
export { type Dispatcher, DispatcherContractError, type DispatchTask, type PostMessageOptions } from "../../sdk/Dispatcher.ts"
export { checkDispatcher } from "./Contract.ts"
export { DelegatedPosts } from "./Delegated.ts"
export { builtinTypes, Dispatchers } from "./Dispatchers.ts"
