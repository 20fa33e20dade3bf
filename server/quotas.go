package server

// Per-user quotas (WithUserQuotas). Gadgets are counted and created under
// Server.quotaMu, so concurrent creates cannot pass the limit. Blueprint
// versions are counted before an install starts and installs are not
// serialized (compiling takes long), so concurrent installs by one user can
// pass the limit by at most the installs that user may run at once.

import (
	"context"
	"fmt"

	"github.com/gadgetd/gadgetd/server/internal/store"
)

// createGadget adds g if its owner is under the gadget quota.
func (s *Server) createGadget(ctx context.Context, g store.Gadget) error {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	have, err := s.store.Gadgets(ctx, g.OwnerID)
	if err != nil {
		return err
	}
	if limit := s.cfg.maxGadgetsPerUser; len(have) >= limit {
		return fmt.Errorf("you have %d gadgets, the limit is %d; remove one first", len(have), limit)
	}
	return s.store.CreateGadget(ctx, g)
}

// checkBlueprintQuota fails if user may install no more blueprint versions.
func (s *Server) checkBlueprintQuota(ctx context.Context, user string) error {
	have, err := s.store.Blueprints(ctx, user)
	if err != nil {
		return err
	}
	if limit := s.cfg.maxBlueprintVersionsPerUser; len(have) >= limit {
		return fmt.Errorf("you have %d blueprint versions installed, the limit is %d; blueprints cannot be removed yet, so ask the operator to raise it", len(have), limit)
	}
	return nil
}
