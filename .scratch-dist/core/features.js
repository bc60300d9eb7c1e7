/**
 * Feature toggles (compatibility.md names), replicated in metadata. Defaults follow the original
 * service: everything enabled that a fresh installation needs, nothing restrictive switched on.
 * Only ever add names; a removed name would make stored toggles unreadable.
 */
export const featureDefaults = {
    disable_event_type_creation: false,
    disable_event_type_deletion: false,
    disable_subscription_creation: false,
    check_partitions_keys: false,
    check_owning_application: false,
    /** The per-partition low-level connection limit (429, compatibility.md); on by default as that table says. */
    limit_consumers_number: true,
    high_level_api: true,
};
export function isFeatureName(name) {
    return Object.prototype.hasOwnProperty.call(featureDefaults, name);
}
//# sourceMappingURL=features.js.map