/** The rules view and the rule engine under it (see build-rules.ts for the algorithm). */
export {
  buildRules,
  computeRule,
  type Origin,
  type PolicyItem,
  type Rule,
  type Rules,
} from './build-rules.js';
export { combinations } from './combinations.js';
export { goShape, mergeConfs, mergePatch } from './merge-confs.js';
export { proxyRules, type RuleItem } from './proxy-rules.js';
export { isSubset, numPositive, subsetFromTags, subsetOfTargetRef, type Subset, type Tag } from './subset.js';
