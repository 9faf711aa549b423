import { RefwatchError, err, ok, type Result } from './errors';

// Kubernetes name rules (apimachinery/pkg/util/validation).
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

export function validateNamespace(ns: string, field = 'namespace'): Result<string> {
  if (ns.length > 63 || !DNS1123_LABEL.test(ns)) {
    return err(
      new RefwatchError(
        'InvalidNamespace',
        `${field} "${ns}" is not a valid namespace: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit`,
        { field, example: 'shop' },
      ),
    );
  }
  return ok(ns);
}

export function validateName(name: string, field = 'name', pathSegment = false): Result<string> {
  if (pathSegment) {
    // RBAC objects use path-segment names, which may contain ':' (system:controller:…).
    if (name.length === 0 || name.length > 253 || name === '.' || name === '..' || /[/%]/.test(name)) {
      return err(
        new RefwatchError(
          'InvalidName',
          `${field} "${name}" is not a valid name: it must be non-empty, at most 253 characters, and contain no '/' or '%'`,
          {
            field,
            example: 'system:aggregate-to-view',
          },
        ),
      );
    }
    return ok(name);
  }
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    return err(
      new RefwatchError(
        'InvalidName',
        `${field} "${name}" is not a valid name: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
        { field, example: 'orders' },
      ),
    );
  }
  return ok(name);
}

export function validateKind(kind: string, field = 'kind'): Result<string> {
  if (kind.length > 63 || !KIND.test(kind)) {
    return err(
      new RefwatchError(
        'InvalidKind',
        `${field} "${kind}" is not a valid kind: use CamelCase letters and digits, starting with an uppercase letter`,
        {
          field,
          example: 'Database',
        },
      ),
    );
  }
  return ok(kind);
}

export function validateGroup(group: string, field = 'group'): Result<string> {
  if (group === '') return ok(group); // the core group
  if (group.length > 253 || !DNS1123_SUBDOMAIN.test(group)) {
    return err(
      new RefwatchError(
        'InvalidGroup',
        `${field} "${group}" is not a valid API group: use a lowercase DNS subdomain, or nothing for the core group`,
        {
          field,
          example: 'demo.refwatch.dev',
        },
      ),
    );
  }
  return ok(group);
}

export function validateVersion(version: string, field = 'version'): Result<string> {
  if (!DNS1123_LABEL.test(version)) {
    return err(
      new RefwatchError('InvalidVersion', `${field} "${version}" is not a valid API version`, {
        field,
        example: 'v1alpha1',
      }),
    );
  }
  return ok(version);
}
