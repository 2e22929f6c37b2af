/**
 * The AccountConfig functions Chipotle's JavaScript SDK (`lit-static/core_sdk.js`, sovereign mode)
 * calls, with the argument and return types of Chipotle's contract, written here from the public
 * signatures (human-readable ABI; nothing of Chipotle's code). A client holding only these fragments
 * must work against Vesta's AccountConfig address unchanged (issue 19, section 3).
 */
const METADATA = "tuple(uint256 id, string name, string description)";
const PKP_DATA = "tuple(uint256 id, address pkpId, string name, string description)";
const USAGE_KEY =
  `tuple(${METADATA} metadata, uint256 apiKeyHash, uint256 expiration, uint256 balance, uint256[] executeInGroups, ` +
  "bool createGroups, bool deleteGroups, bool createPKPs, uint256[] manageIPFSIdsInGroups, uint256[] addPkpToGroups, uint256[] removePkpFromGroups)";

/** The views the SDK reads through its view-only contract. */
export const CHIPOTLE_VIEW_ABI = [
  "function api_payers() view returns (address[])",
  "function accountExistsAndIsMutable(uint256 apiKeyHash) view returns (bool)",
  `function listGroups(uint256 accountApiKeyHash, uint256 pageNumber, uint256 pageSize) view returns (${METADATA}[])`,
  `function listPkps(uint256 accountApiKeyHash, uint256 pageNumber, uint256 pageSize) view returns (${PKP_DATA}[])`,
  `function listWalletsInGroup(uint256 accountApiKeyHash, uint256 groupId, uint256 pageNumber, uint256 pageSize) view returns (${PKP_DATA}[])`,
  `function listActions(uint256 accountApiKeyHash, uint256 pageNumber, uint256 pageSize) view returns (${METADATA}[])`,
  `function listActionsInGroup(uint256 accountApiKeyHash, uint256 groupId, uint256 pageNumber, uint256 pageSize) view returns (${METADATA}[])`,
  `function listApiKeys(uint256 accountApiKeyHash, uint256 pageNumber, uint256 pageSize) view returns (${USAGE_KEY}[])`,
];

/** The writes the SDK sends from the connected wallet. */
export const CHIPOTLE_WRITE_ABI = [
  "function newAccount(uint256 apiKeyHash, bool managed, string accountName, string accountDescription, address adminWalletAddress)",
  "function newChainSecuredAccount(string accountName, string accountDescription)",
  "function registerWalletDerivation(uint256 apiKeyHash, address pkpId, uint256 derivationPath, string name, string description)",
  "function addGroup(uint256 apiKeyHash, string name, string description, uint256[] cidHashes, address[] pkpIds) returns (uint256)",
  "function updateGroup(uint256 accountApiKeyHash, uint256 groupId, string name, string description, uint256[] cidHashes, address[] pkpIds)",
  "function updateGroupMetadata(uint256 accountApiKeyHash, uint256 groupId, string name, string description)",
  "function removeGroup(uint256 apiKeyHash, uint256 groupId)",
  "function addAction(uint256 accountApiKeyHash, string name, string description, uint256 actionHash)",
  "function removeAction(uint256 accountApiKeyHash, uint256 actionHash)",
  "function addActionToGroup(uint256 apiKeyHash, uint256 groupId, uint256 action)",
  "function removeActionFromGroup(uint256 apiKeyHash, uint256 groupId, uint256 action)",
  "function updateActionMetadata(uint256 accountApiKeyHash, uint256 actionHash, uint256 groupId, string name, string description)",
  "function addPkpToGroup(uint256 apiKeyHash, uint256 groupId, address pkpId)",
  "function removePkpFromGroup(uint256 apiKeyHash, uint256 groupId, address pkpId)",
  "function setUsageApiKey(uint256 accountApiKeyHash, uint256 usageApiKeyHash, uint256 expiration, uint256 balance, string name, string description, " +
    "bool createGroups, bool deleteGroups, bool createPKPs, uint256[] manageIPFSIdsInGroups, uint256[] addPkpToGroups, uint256[] removePkpFromGroups, uint256[] executeInGroups)",
  "function removeUsageApiKey(uint256 accountApiKeyHash, uint256 usageApiKeyHash)",
  "function updateUsageApiKeyMetadata(uint256 accountApiKeyHash, uint256 usageApiKeyHash, string name, string description)",
];

export const CHIPOTLE_ABI = [...CHIPOTLE_VIEW_ABI, ...CHIPOTLE_WRITE_ABI];
