/**
 * What integrations (through the SDK) use of result dispatch: the registry service, the contract
 * types, and the check `register` applies.
 */
export { Dispatchers, builtinTypes } from "./Dispatchers.ts"
export { checkDispatcher } from "./Contract.ts"
export { DispatcherContractError, type Dispatcher, type DispatchTask, type PostMessageOptions } from "../../sdk/Dispatcher.ts"
