import { graphql } from '../../gql';

/** What a Timeline draws, as every query that feeds one asks for it (the target page, the restore wizard). */
export const TimelinePartsFragment = graphql(`
  fragment TimelineParts on TargetTimeline {
    from
    to
    windows {
      from
      to
    }
    backups {
      id
      time
      phase
      mode
      verified
      verifyFailed
      pinned
    }
    verifications {
      backupID
      at
      passed
    }
    segmentSpans {
      firstTime
      lastTime
      segments
      commits
      partial
    }
    breaks {
      kind
      from
      to
      reason
    }
  }
`);
